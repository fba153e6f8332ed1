package io.kvreuse.protocol;

import java.util.List;
import java.util.UUID;
import org.jspecify.annotations.Nullable;

/**
 * One order of {@code GET /api/v1/agents/{hostId}/orders}: per rank, where the blocks are, where they
 * go, and the bytes to move. {@code claims} above one means the order was handed out again (an
 * agent may already be running it).
 */
public record TransferOrder(
        UUID orderId,
        UUID leaseId,
        String hostId,
        int claims,
        List<Part> parts,
        @Nullable List<RemoteAgent> remoteAgents) {

    /** One rank's transfer; {@code slotRuns} are the source runs {@code [[start, count], …]}. */
    public record Part(int rank, Endpoint source, Endpoint destination, List<List<Integer>> slotRuns, long bytes) {}

    /**
     * One side of a part: a GPU on a host and the engine's region, cut into blocks at slot runs.
     * {@code registeredRegions} are the regions that side's engine registered for this rank (its bank
     * part, or its destination regions): the agent runs no part whose region is not among them.
     */
    public record Endpoint(
            String hostId,
            int gpuOrdinal,
            String nixlAgent,
            String regionRef,
            List<List<Integer>> slotRuns,
            long bytesPerBlock,
            @Nullable List<String> registeredRegions) {

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
    public record RemoteAgent(String hostId, int gpuOrdinal, String name, String metadata) {
        @Override
        public String toString() {
            return "RemoteAgent[" + name + "]";
        }
    }
}
