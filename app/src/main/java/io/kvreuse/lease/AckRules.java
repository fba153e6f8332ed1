package io.kvreuse.lease;

import io.kvreuse.error.KvReuseException;
import io.kvreuse.lease.LeaseAggregate.Command;
import io.kvreuse.lease.LeaseAggregate.CommandState;
import io.kvreuse.lease.LeaseAggregate.HoldState;
import io.kvreuse.lease.LeaseMove.Trigger;
import org.jspecify.annotations.Nullable;

/**
 * What an engine's acknowledgement does to its lease. A PIN holds only while the lease is PROPOSED
 * under the epochs it was made with and the bank still holds every block at its slot; otherwise the
 * lease is REFUSED and released. An UNPIN or RELEASE confirmation releases exactly once; a refused
 * one leaves the command open, to be handed out again. An acknowledgement seen before is a duplicate.
 */
final class AckRules {

    private AckRules() {}

    static LeaseDecision ack(LeaseDraft d, LeaseReport.Ack a) {
        Command c = d.command(a.commandId());
        if (c == null || !c.incarnationId().equals(a.incarnationId())) {
            return d.refuse(LeaseProblems.noSuchCommand(a.commandId()));
        }
        if (c.state() != CommandState.OPEN) {
            Boolean held = c.type() == LeaseAggregate.CommandType.PIN ? d.pin(c.rank()) == HoldState.HELD : null;
            return d.done(null, held, true);
        }
        return switch (c.type()) {
            case PIN -> pin(d, c, a);
            case UNPIN -> confirm(d, c, a, true);
            case RELEASE -> confirm(d, c, a, false);
            case DELIVERED -> {
                d.close(c.commandId(), a.ok() ? CommandState.ACKED : CommandState.REFUSED, a.detail());
                yield d.done();
            }
        };
    }

    private static LeaseDecision pin(LeaseDraft d, Command c, LeaseReport.Ack a) {
        d.close(c.commandId(), a.ok() ? CommandState.ACKED : CommandState.REFUSED, a.detail());
        LeaseRow row = d.row();
        LeaseAggregate.Parties now = d.parties();
        if (row.state() != LeaseState.PROPOSED) {
            return d.done(LeaseProblems.wrongState(row.leaseId(), row.state(), "a PIN"), false, false);
        }
        if (!a.ok()) {
            String reason = a.detail() == null ? "donor refused the pin" : "donor refused the pin: " + a.detail();
            return refuse(d, reason, null);
        }
        if (now.donorEpoch() != row.donorEpoch()) {
            d.signal(new LeaseDecision.Signal.Stale("lease"));
            return refuse(
                    d,
                    "donor fenced since the lease was made",
                    LeaseProblems.leaseFenced(row.leaseId(), "donor", row.donorEpoch(), now.donorEpoch()));
        }
        if (now.bankEpoch() != row.bankEpoch() || now.bankDropped()) {
            d.signal(new LeaseDecision.Signal.Stale("bank"));
            return refuse(
                    d,
                    "bank reset or dropped since the lease was made",
                    LeaseProblems.leaseFenced(row.leaseId(), "bank", row.bankEpoch(), now.bankEpoch()));
        }
        if (!a.blocksAtSlots()) {
            return refuse(d, "the bank no longer holds every block at its slot", null);
        }
        if (d.pin(c.rank()) == null) {
            d.pinHeld(c.rank());
        }
        if (d.pins().size() >= d.tp()) {
            d.move(Trigger.PIN_HELD, null, null);
            d.orderWhenReady();
        }
        return d.done(null, true, false);
    }

    private static LeaseDecision refuse(LeaseDraft d, String reason, @Nullable KvReuseException after) {
        d.move(Trigger.PIN_REFUSED, "REFUSED", reason);
        d.release(Trigger.RELEASE, "REFUSED", null);
        return d.done(after, false, false);
    }

    /** The donor dropped a pin ({@code pin}) or the target freed its destination. */
    private static LeaseDecision confirm(LeaseDraft d, Command c, LeaseReport.Ack a, boolean pin) {
        if (!a.ok()) {
            return d.done();
        }
        if (pin && d.pin(c.rank()) == HoldState.RELEASING) {
            d.pinState(c.rank(), HoldState.RELEASED);
        } else if (!pin) {
            d.destinationsState(HoldState.RELEASING, HoldState.RELEASED);
        }
        d.settle();
        d.close(c.commandId(), CommandState.ACKED, a.detail());
        return d.done();
    }
}
