package io.kvreuse.lease;

import io.kvreuse.lease.LeaseAggregate.CommandState;
import io.kvreuse.lease.LeaseAggregate.CommandType;
import io.kvreuse.lease.LeaseAggregate.HoldState;
import io.kvreuse.lease.LeaseAggregate.OrderState;
import io.kvreuse.protocol.PartState;
import java.util.UUID;
import org.jspecify.annotations.Nullable;

/**
 * One row-level change a decision asks the writer to make, for the decision's lease. The writer
 * groups the changes of a whole batch by kind and writes each kind with one set-based statement.
 */
sealed interface LeaseChange {

    /** The lease row, written once at its final state, conditional on the version that was read. */
    record Row(LeaseRow from, LeaseRow to) implements LeaseChange {}

    record PinAdded(int rank) implements LeaseChange {}

    record PinMoved(int rank, HoldState from, HoldState to) implements LeaseChange {}

    /** The bank's pin counts of the lease's blocks on one rank go up ({@code delta} 1) or down (-1). */
    record BlocksPinned(int rank, int delta) implements LeaseChange {}

    record DestinationAdded(int rank, String regionRef, int[][] runs) implements LeaseChange {}

    /** Every destination rank in {@code from} moves to {@code to}. */
    record DestinationsMoved(HoldState from, HoldState to) implements LeaseChange {}

    record CommandIssued(UUID commandId, UUID incarnationId, CommandType type, int rank) implements LeaseChange {}

    record CommandClosed(
            UUID commandId, CommandState state, @Nullable String detail) implements LeaseChange {}

    /** The transfer order is queued, one part per rank. */
    record OrderQueued(UUID orderId) implements LeaseChange {}

    record OrderMoved(UUID orderId, OrderState from, OrderState to) implements LeaseChange {}

    record PartReported(
            UUID orderId,
            int rank,
            PartState state,
            long bytesMoved,
            long durationUs,
            @Nullable Integer nativeStatus,
            @Nullable String detail)
            implements LeaseChange {}
}
