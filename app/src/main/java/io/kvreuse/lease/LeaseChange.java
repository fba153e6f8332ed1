package io.kvreuse.lease;

import io.kvreuse.lease.LeaseAggregate.CommandState;
import io.kvreuse.lease.LeaseAggregate.CommandType;
import io.kvreuse.lease.LeaseAggregate.HoldState;
import io.kvreuse.lease.LeaseAggregate.OrderState;
import java.util.UUID;
import org.jspecify.annotations.Nullable;

/**
 * One row-level change a decision asks the writer to make, for the decision's lease. The writer
 * groups the changes of a whole batch by kind and writes each kind with one set-based statement.
 */
sealed interface LeaseChange {

    /** The lease row, written once at its final state, conditional on the version that was read. */
    record Row(LeaseRow from, LeaseRow to) implements LeaseChange {}

    /** A pin held: the bank's pin counts of the lease's blocks on the rank go up. */
    record PinAdded(int rank) implements LeaseChange {}

    /** A pin's move; one RELEASED gives the bank's blocks back. */
    record PinMoved(int rank, HoldState from, HoldState to) implements LeaseChange {}

    record DestinationAdded(LeaseReport.RankDestination rank) implements LeaseChange {}

    /** Every destination rank in {@code from} moves to {@code to}. */
    record DestinationsMoved(HoldState from, HoldState to) implements LeaseChange {}

    record CommandIssued(UUID commandId, UUID incarnationId, CommandType type, int rank) implements LeaseChange {}

    record CommandClosed(
            UUID commandId, CommandState state, @Nullable String detail) implements LeaseChange {}

    /** The transfer order is queued, one part per rank. */
    record OrderQueued(UUID orderId) implements LeaseChange {}

    record OrderMoved(UUID orderId, OrderState from, OrderState to) implements LeaseChange {}

    /** A part's report, on a part that was not final. */
    record PartReported(LeaseReport.Part report) implements LeaseChange {}
}
