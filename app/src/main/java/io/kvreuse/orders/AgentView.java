package io.kvreuse.orders;

import java.time.Instant;
import java.util.List;

/**
 * A node agent as shown by the API. NIXL metadata appears only as its length and SHA-256 digest:
 * the blob holds raw addresses and never leaves the control plane except inside an order.
 */
public record AgentView(
        String hostId,
        String state,
        long agentEpoch,
        List<Gpu> gpus,
        List<NixlAgent> nixlAgents,
        Instant registeredAt,
        Instant lastHeartbeatAt) {

    public record Gpu(int ordinal, String uuid) {}

    public record NixlAgent(int gpuOrdinal, String name, int metadataBytes, String metadataSha256) {}
}
