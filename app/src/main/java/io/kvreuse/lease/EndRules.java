package io.kvreuse.lease;

import io.kvreuse.lease.LeaseAggregate.CommandType;
import io.kvreuse.lease.LeaseAggregate.HoldState;
import io.kvreuse.lease.LeaseAggregate.OrderState;
import io.kvreuse.lease.LeaseMove.Trigger;
import java.time.Instant;

/**
 * How leases end without a report: deadlines as of the sweeper's {@code now}, and operator cleanup.
 * PROPOSED past its TTL expires (or releases what a few ranks pinned); a source pinned but never
 * transferred is released; a transfer past its deadline becomes UNCERTAIN and keeps every pin and
 * allocation — no timer releases it; a delivery never committed is abandoned.
 */
final class EndRules {

    private EndRules() {}

    static LeaseDecision tick(LeaseDraft d, Instant now) {
        LeaseRow row = d.row();
        switch (row.state()) {
            case PROPOSED -> {
                if (row.ttlDeadline().isBefore(now) && d.lease().holdsAnything()) {
                    d.release(Trigger.TTL_PASSED_HOLDING, "EXPIRED", "lease TTL passed");
                } else if (row.ttlDeadline().isBefore(now)) {
                    d.withdraw(CommandType.PIN);
                    d.move(Trigger.TTL_PASSED, "EXPIRED", "lease TTL passed");
                }
            }
            case SOURCE_PINNED -> {
                if (row.transferDeadline().isBefore(now)) {
                    d.release(Trigger.TRANSFER_DEADLINE, "EXPIRED", "source pinned but never transferred");
                }
            }
            case TRANSFERRING -> {
                if (row.transferDeadline().isBefore(now)) {
                    d.move(Trigger.TRANSFER_DEADLINE, null, "transfer deadline passed");
                    d.orderState(OrderState.UNCERTAIN);
                }
            }
            case DELIVERED -> {
                if (row.abandonDeadline().isBefore(now)) {
                    d.move(Trigger.ABANDON_DEADLINE, "ABANDONED", "delivered but never committed");
                    d.release(Trigger.RELEASE, "ABANDONED", null);
                }
            }
            default -> {}
        }
        return d.done();
    }

    /** A proposal selection gave up on ends at once if it is still PROPOSED or only pinned. */
    static LeaseDecision withdrawn(LeaseDraft d, String reason) {
        if (d.state() == LeaseState.PROPOSED && d.lease().holdsAnything()) {
            d.release(Trigger.WITHDRAWN_HOLDING, "WITHDRAWN", reason);
        } else if (d.state() == LeaseState.PROPOSED) {
            d.withdraw(CommandType.PIN);
            d.move(Trigger.WITHDRAWN, "EXPIRED", reason);
        } else if (d.state() == LeaseState.SOURCE_PINNED) {
            d.release(Trigger.WITHDRAWN, "WITHDRAWN", reason);
        }
        return d.done();
    }

    /**
     * Operator cleanup of a fenced incarnation (quiescence proven or attested): the lease ends; what
     * the fenced side held is released at once (its process is gone), what a live other side holds
     * through the normal UNPIN and RELEASE commands.
     */
    static LeaseDecision cleanup(LeaseDraft d, LeaseReport.Cleanup c) {
        LeaseRow row = d.row();
        if (row.state().isTerminal()) {
            return d.done();
        }
        d.orderState(OrderState.FAILED);
        switch (row.state()) {
            case RELEASING -> {}
            case REFUSED, FAILED, COMMITTED -> d.release(Trigger.RELEASE, "RECLAIMED", c.reason());
            default -> {
                d.move(Trigger.RECLAIMED, "RECLAIMED", c.reason());
                d.release(Trigger.RELEASE, "RECLAIMED", null);
            }
        }
        if (row.donorId().equals(c.fencedIncarnation())) {
            d.pins().stream()
                    .filter(p -> p.state() == HoldState.RELEASING)
                    .forEach(p -> d.pinState(p.rank(), HoldState.RELEASED));
            d.withdraw(CommandType.UNPIN);
        }
        if (row.targetId().equals(c.fencedIncarnation())) {
            d.destinationsState(HoldState.RELEASING, HoldState.RELEASED);
            d.withdraw(CommandType.RELEASE);
        }
        d.settle();
        return d.done();
    }
}
