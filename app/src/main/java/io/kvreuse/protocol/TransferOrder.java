package io.kvreuse.protocol;

import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import io.swagger.v3.oas.annotations.media.Schema;
import java.util.List;
import java.util.UUID;
import org.jspecify.annotations.Nullable;

/**
 * One order of {@code GET /api/v1/agents/{hostId}/orders}: per rank, where the blocks are, where they
 * go, and the bytes to move. {@code claims} above one means the order was handed out again (an
 * agent may already be running it). For a cross-host (MNNVL) transfer {@code remoteAgents} carries
 * the donor host's NIXL metadata to load; the control plane sends it empty on one host.
 */
@Schema(description = "An order for a node agent: per rank, where the blocks are, where they go and the bytes to move")
public record TransferOrder(
        @Schema(description = "The transfer order") UUID orderId,
        @Schema(description = "The lease") UUID leaseId,

        @Schema(description = "The host whose agent runs it")
        String hostId,

        @Schema(description = "Times the order was handed out (above 1: handed out again)")
        int claims,

        @Schema(description = "One part per rank") List<Part> parts,

        @Schema(description = "Donor-host NIXL agents for a cross-host transfer (empty on one host)")
        List<RemoteAgent> remoteAgents) {

    /** One rank's transfer; {@code slotRuns} are the source runs {@code [[start, count], …]}. */
    @Schema(name = "TransferOrderPart", description = "One rank's transfer")
    public record Part(
            @Schema(description = "Tensor-parallel rank") int rank,
            @Schema(description = "Where the blocks are") Endpoint source,
            @Schema(description = "Where they go") Endpoint destination,

            @Schema(description = "Source slot runs [start, count]")
            List<List<Integer>> slotRuns,

            @Schema(description = "Bytes to move") long bytes) {}

    /**
     * One side of a part: a GPU on a host and the engine's region, cut into blocks at slot runs.
     * {@code registeredRegions} are the regions that side's engine registered for this rank (its bank
     * part, or its destination regions): the agent runs no part whose region is not among them.
     * The fields go out in the order the control plane always sent them.
     */
    @JsonPropertyOrder({
        "hostId",
        "slotRuns",
        "nixlAgent",
        "regionRef",
        "gpuOrdinal",
        "bytesPerBlock",
        "registeredRegions"
    })
    @Schema(
            name = "TransferEndpoint",
            description =
                    "One side of a part: a GPU of a host, its NIXL agent and the engine's region, cut into blocks at slot runs")
    public record Endpoint(
            @Schema(description = "The GPU host, as engines and its node agent name it")
            String hostId,

            @Schema(description = "GPU ordinal on its host") int gpuOrdinal,
            @Schema(description = "NIXL agent of that GPU") String nixlAgent,

            @Schema(
                    description =
                            "The engine's memory region: shm://<name> (emulation) or cuda-ipc://<gpuOrdinal>/<handle>?size=<bytes>")
            String regionRef,

            @Schema(description = "Slot runs [start, count] in the region")
            List<List<Integer>> slotRuns,

            @Schema(description = "Bytes of one block in the region")
            long bytesPerBlock,

            @Schema(
                    description =
                            "The regions that side's engine registered for this rank; the agent runs no part outside them")
            @Nullable
            List<String> registeredRegions) {

        /** An endpoint whose own region is the one its engine registered. */
        public Endpoint(
                String hostId,
                int gpuOrdinal,
                String nixlAgent,
                String regionRef,
                List<List<Integer>> slotRuns,
                long bytesPerBlock) {
            this(hostId, gpuOrdinal, nixlAgent, regionRef, slotRuns, bytesPerBlock, List.of(regionRef));
        }

        public int blocks() {
            return slotRuns.stream().mapToInt(r -> r.get(1)).sum();
        }
    }

    /** A donor host's NIXL agent, for a cross-host transfer; metadata never shown. */
    @Schema(name = "TransferOrderRemoteAgent", description = "A donor host's NIXL agent for a cross-host transfer")
    public record RemoteAgent(
            @Schema(description = "The GPU host, as engines and its node agent name it")
            String hostId,

            @Schema(description = "GPU ordinal on its host") int gpuOrdinal,

            @Schema(description = "NIXL agent name, kvreuse@<host>/gpu<ordinal>")
            String name,

            @Schema(description = "NIXL agent metadata, base64 (holds raw addresses; never logged or shown)")
            String metadata) {
        @Override
        public String toString() {
            return "RemoteAgent[" + name + "]";
        }
    }
}
