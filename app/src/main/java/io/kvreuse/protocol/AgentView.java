package io.kvreuse.protocol;

import io.swagger.v3.oas.annotations.media.Schema;
import java.time.Instant;
import java.util.List;

/**
 * A node agent as shown by the API, and what registration and heartbeats answer the agent (its new
 * {@code agentEpoch}). NIXL metadata appears only as its length and SHA-256 digest: the blob holds
 * raw addresses and never leaves the control plane except inside an order.
 */
@Schema(description = "A node agent: its host, state, epoch, GPUs and NIXL agents (metadata only as length and digest)")
public record AgentView(
        @Schema(description = "The GPU host, as engines and its node agent name it")
        String hostId,

        @Schema(description = "ONLINE, SUSPECT or OFFLINE") String state,

        @Schema(description = "The agent epoch, bumped by every registration")
        long agentEpoch,

        @Schema(description = "The GPUs it serves") List<Gpu> gpus,
        @Schema(description = "Its NIXL agents") List<NixlAgent> nixlAgents,
        @Schema(description = "When it registered") Instant registeredAt,
        @Schema(description = "Last heartbeat") Instant lastHeartbeatAt) {

    @Schema(name = "AgentGpu", description = "A GPU an agent serves")
    public record Gpu(
            @Schema(description = "GPU ordinal on the host") int ordinal,
            @Schema(description = "The GPU's UUID") String uuid) {}

    @Schema(name = "AgentNixlAgent", description = "A NIXL agent, without its metadata")
    public record NixlAgent(
            @Schema(description = "GPU ordinal on its host") int gpuOrdinal,

            @Schema(description = "NIXL agent name, kvreuse@<host>/gpu<ordinal>")
            String name,

            @Schema(description = "Length of its metadata") int metadataBytes,

            @Schema(description = "SHA-256 of its metadata, hex")
            String metadataSha256) {}
}
