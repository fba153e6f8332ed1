package io.kvreuse.orders;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * An order as handed to the agent that initiates the transfer: per rank the source and destination
 * ({@code hostId, gpuOrdinal, nixlAgent, regionRef, slotRuns, bytesPerBlock}) and the bytes to move.
 * For a cross-host (MNNVL) transfer {@code remoteAgents} carries the donor host's NIXL metadata to
 * load; it is empty on one host. {@code claims} counts hand-outs (more than one: a redelivery).
 */
public record TransferOrder(
        UUID orderId, UUID leaseId, String hostId, int claims, List<Part> parts, List<RemoteAgent> remoteAgents) {

    public record Part(
            int rank,
            Map<String, Object> source,
            Map<String, Object> destination,
            List<List<Integer>> slotRuns,
            long bytes) {}

    public record RemoteAgent(String hostId, int gpuOrdinal, String name, String metadata) {}

    /**
     * A claimed order with parts not yet final, for an agent process that starts while a previous
     * one may have died holding them; {@code parts} lists only the unfinished ranks and their state.
     */
    public record Unfinished(UUID orderId, UUID leaseId, int claims, Instant claimedAt, List<PartState> parts) {}

    /** One unfinished part of a claimed order. */
    public record PartState(int rank, String state) {}

    /** The answer to a part report. */
    public record PartAck(UUID orderId, int rank, String state, String leaseState) {}
}
