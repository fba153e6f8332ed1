package io.kvreuse.lease;

import io.kvreuse.protocol.PartState;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import org.jspecify.annotations.Nullable;

/**
 * One thing that happens to a lease: a report from an engine, the agent or an operator, or a tick
 * of the sweeper. What the shell must read to decide it (whether the bank still holds the blocks,
 * whether the target registered the regions) travels with the report, so the decider reads nothing.
 */
sealed interface LeaseReport {

    /**
     * An engine's acknowledgement of one of its commands. {@code blocksAtSlots}: for a PIN, whether the
     * bank still holds every block of the lease at its slot on the command's rank.
     */
    record Ack(
            UUID incarnationId,
            UUID commandId,
            boolean ok,
            @Nullable String detail,
            boolean blocksAtSlots) implements LeaseReport {}

    /** One rank of a destination: the region and the slot runs the fetched blocks go to. */
    record RankDestination(int rank, String regionRef, int[][] runs) {}

    /** The target's destination; {@code unregistered} is the first rank's region problem, if any. */
    record Destination(
            List<RankDestination> ranks, @Nullable String unregistered) implements LeaseReport {

        public Destination {
            ranks = List.copyOf(ranks);
        }
    }

    /** The node agent claimed the lease's transfer order. */
    record OrderClaimed() implements LeaseReport {}

    /** The agent's report on one part of the lease's order. */
    record Part(
            UUID orderId,
            int rank,
            PartState state,
            long bytes,
            long durationUs,
            @Nullable Integer nativeStatus,
            @Nullable String detail)
            implements LeaseReport {}

    /** The target took {@code committedBlocks} of the delivered blocks as its own. */
    record Commit(int committedBlocks) implements LeaseReport {}

    /** The target (or an operator for it) gives up on the lease. */
    record Abort(String reason) implements LeaseReport {}

    /** Who attests quiescence: an engine never speaks over the agent whose part is not final. */
    enum Witness {
        ENGINE,
        AGENT,
        OPERATOR
    }

    /** Evidence that one side of the transfer can no longer be written. */
    record Quiesced(
            boolean source, Witness witness, @Nullable String evidence) implements LeaseReport {}

    /** An operator's cleanup of {@code fencedIncarnation}: the lease ends, what the fenced side held is gone. */
    record Cleanup(UUID fencedIncarnation, String reason) implements LeaseReport {}

    /** Selection gave up on the proposal before the router used it (the hint was never sent). */
    record Withdrawn(String reason) implements LeaseReport {}

    /** The sweeper's look at the lease's deadlines as of {@code now}. */
    record Tick(Instant now) implements LeaseReport {}
}
