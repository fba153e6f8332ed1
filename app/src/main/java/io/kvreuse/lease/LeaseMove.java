package io.kvreuse.lease;

import static io.kvreuse.lease.LeaseState.COMMITTED;
import static io.kvreuse.lease.LeaseState.DELIVERED;
import static io.kvreuse.lease.LeaseState.EXPIRED;
import static io.kvreuse.lease.LeaseState.FAILED;
import static io.kvreuse.lease.LeaseState.PROPOSED;
import static io.kvreuse.lease.LeaseState.REFUSED;
import static io.kvreuse.lease.LeaseState.RELEASED;
import static io.kvreuse.lease.LeaseState.RELEASING;
import static io.kvreuse.lease.LeaseState.SOURCE_PINNED;
import static io.kvreuse.lease.LeaseState.TRANSFERRING;
import static io.kvreuse.lease.LeaseState.UNCERTAIN;

import java.util.Arrays;
import java.util.EnumSet;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Every move of the lease state machine, {@code from, on → to}, in one table: the decider makes no
 * other, and the table in the Leases section of {@code docs/design.md} lists exactly these rows.
 * Nothing leaves {@code UNCERTAIN} on a timer, and memory is only ever released from {@code RELEASING}.
 */
enum LeaseMove {
    PIN_HELD(PROPOSED, Trigger.PIN_HELD, SOURCE_PINNED),
    PIN_REFUSED(PROPOSED, Trigger.PIN_REFUSED, REFUSED),
    PROPOSAL_EXPIRED(PROPOSED, Trigger.TTL_PASSED, EXPIRED),
    PARTLY_PINNED_EXPIRED(PROPOSED, Trigger.TTL_PASSED_HOLDING, RELEASING),
    PROPOSAL_ABORTED(PROPOSED, Trigger.ABORTED, FAILED),
    PROPOSAL_RECLAIMED(PROPOSED, Trigger.RECLAIMED, FAILED),
    PROPOSAL_WITHDRAWN(PROPOSED, Trigger.WITHDRAWN, EXPIRED),
    PARTLY_PINNED_WITHDRAWN(PROPOSED, Trigger.WITHDRAWN_HOLDING, RELEASING),
    ORDER_CLAIMED(SOURCE_PINNED, Trigger.ORDER_CLAIMED, TRANSFERRING),
    NEVER_TRANSFERRED(SOURCE_PINNED, Trigger.TRANSFER_DEADLINE, RELEASING),
    PINNED_ABORTED(SOURCE_PINNED, Trigger.ABORTED, FAILED),
    PINNED_RECLAIMED(SOURCE_PINNED, Trigger.RECLAIMED, FAILED),
    PINNED_WITHDRAWN(SOURCE_PINNED, Trigger.WITHDRAWN, RELEASING),
    ALL_PARTS_DONE(TRANSFERRING, Trigger.PARTS_DONE, DELIVERED),
    PARTS_STOPPED(TRANSFERRING, Trigger.PARTS_STOPPED, FAILED),
    FENCED_DURING_TRANSFER(TRANSFERRING, Trigger.EPOCH_CHANGED, FAILED),
    PART_LOST_TRACK(TRANSFERRING, Trigger.PART_UNCERTAIN, UNCERTAIN),
    TRANSFER_DEADLINE(TRANSFERRING, Trigger.TRANSFER_DEADLINE, UNCERTAIN),
    TRANSFER_ABORTED(TRANSFERRING, Trigger.ABORTED, UNCERTAIN),
    ENGINES_QUIESCED(TRANSFERRING, Trigger.ENGINES_QUIESCED, UNCERTAIN),
    TRANSFER_QUIESCED(TRANSFERRING, Trigger.QUIESCED, FAILED),
    TRANSFER_RECLAIMED(TRANSFERRING, Trigger.RECLAIMED, FAILED),
    DELIVERY_COMMITTED(DELIVERED, Trigger.COMMITTED, COMMITTED),
    DELIVERY_ABORTED(DELIVERED, Trigger.ABORTED, FAILED),
    DELIVERY_ABANDONED(DELIVERED, Trigger.ABANDON_DEADLINE, FAILED),
    DELIVERY_RECLAIMED(DELIVERED, Trigger.RECLAIMED, FAILED),
    UNCERTAIN_STOPPED(UNCERTAIN, Trigger.PARTS_STOPPED, FAILED),
    UNCERTAIN_QUIESCED(UNCERTAIN, Trigger.QUIESCED, FAILED),
    UNCERTAIN_RECLAIMED(UNCERTAIN, Trigger.RECLAIMED, FAILED),
    COMMITTED_RELEASE(COMMITTED, Trigger.RELEASE, RELEASING),
    REFUSED_RELEASE(REFUSED, Trigger.RELEASE, RELEASING),
    FAILED_RELEASE(FAILED, Trigger.RELEASE, RELEASING),
    HOLDS_RELEASED(RELEASING, Trigger.HOLDS_RELEASED, RELEASED);

    enum Trigger {
        PIN_HELD,
        PIN_REFUSED,
        TTL_PASSED,
        TTL_PASSED_HOLDING,
        ORDER_CLAIMED,
        TRANSFER_DEADLINE,
        PARTS_DONE,
        PARTS_STOPPED,
        EPOCH_CHANGED,
        PART_UNCERTAIN,
        ENGINES_QUIESCED,
        QUIESCED,
        COMMITTED,
        ABANDON_DEADLINE,
        ABORTED,
        RECLAIMED,
        WITHDRAWN,
        WITHDRAWN_HOLDING,
        RELEASE,
        HOLDS_RELEASED
    }

    final LeaseState from;
    final Trigger on;
    final LeaseState to;

    LeaseMove(LeaseState from, Trigger on, LeaseState to) {
        this.from = from;
        this.on = on;
        this.to = to;
    }

    /** The move {@code on} makes from {@code from}, if the table has one. */
    static Optional<LeaseMove> of(LeaseState from, Trigger on) {
        return Arrays.stream(values()).filter(m -> m.from == from && m.on == on).findFirst();
    }

    static Set<LeaseState> next(LeaseState from) {
        return Arrays.stream(values())
                .filter(m -> m.from == from)
                .map(m -> m.to)
                .collect(Collectors.toCollection(() -> EnumSet.noneOf(LeaseState.class)));
    }
}
