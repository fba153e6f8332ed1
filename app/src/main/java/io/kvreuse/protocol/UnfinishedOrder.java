package io.kvreuse.protocol;

import java.time.Instant;
import java.util.List;
import java.util.UUID;

/**
 * {@code GET /api/v1/agents/{hostId}/orders/unfinished}: a claimed order of the host with parts that
 * never reached a final report; {@code parts} holds only those ranks and their last reported state.
 */
public record UnfinishedOrder(UUID orderId, UUID leaseId, int claims, Instant claimedAt, List<Part> parts) {

    public record Part(int rank, String state) {}
}
