package io.kvreuse.lease;

import io.kvreuse.error.KvReuseException;
import io.kvreuse.error.ProblemType;
import io.kvreuse.lease.LeaseAggregate.CommandType;
import io.kvreuse.lease.LeaseAggregate.Order;
import io.kvreuse.lease.LeaseAggregate.OrderState;
import io.kvreuse.lease.LeaseAggregate.Part;
import io.kvreuse.lease.LeaseMove.Trigger;
import io.kvreuse.protocol.PartState;
import java.util.Collection;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The transfer: the agent's claim, its part reports and quiescence evidence. DELIVERED only when
 * every rank is DONE for the full range under unchanged donor, target and bank epochs; when every
 * part stopped otherwise the lease FAILS (ranks must all hold the same blocks, so no shorter prefix
 * is offered). A part that lost track makes the lease UNCERTAIN; from there even late DONE reports
 * end it only as FAILED, and no engine's evidence overrides an agent part that is not final.
 */
final class TransferRules {

    private TransferRules() {}

    static LeaseDecision claimed(LeaseDraft d) {
        d.claimed();
        if (d.state() == LeaseState.SOURCE_PINNED) {
            d.move(Trigger.ORDER_CLAIMED, null, null);
        }
        return d.done();
    }

    /** A part report; one on a part already final answers as is if it says the same, 409 otherwise. */
    static LeaseDecision part(LeaseDraft d, LeaseReport.Part p) {
        Order order = d.order();
        Part part = order == null || !order.orderId().equals(p.orderId())
                ? null
                : order.parts().get(p.rank());
        if (part == null) {
            return d.refuse(noSuchPart(p));
        }
        if (p.bytes() > part.bytes()) {
            return d.refuse(LeaseProblems.invalid("bytes " + p.bytes() + " exceeds the part's " + part.bytes()));
        }
        if (part.state().isFinal() && part.state() != p.state()) {
            return d.refuse(partFinal(p, part.state()));
        }
        if (!part.state().isFinal()) {
            d.part(p);
        }
        return outcome(d);
    }

    /** Decides a lease that may be writing from its parts as they now stand. */
    private static LeaseDecision outcome(LeaseDraft d) {
        Order order = d.order();
        if (!d.state().mayBeWriting() || order == null || order.parts().isEmpty()) {
            return d.done();
        }
        Collection<Part> parts = order.parts().values();
        boolean stopped = parts.stream().allMatch(p -> p.state().isFinal());
        if (d.state() == LeaseState.UNCERTAIN) {
            if (stopped) {
                fail(d, Trigger.PARTS_STOPPED, null, "transfer stopped after it was uncertain", OrderState.QUIESCED);
            }
        } else if (parts.stream().allMatch(Part::complete)) {
            deliver(d, parts);
        } else if (stopped) {
            boolean partial = parts.stream().anyMatch(p -> p.state() == PartState.DONE);
            fail(
                    d,
                    Trigger.PARTS_STOPPED,
                    partial ? "PARTIAL" : "FAILED",
                    partial ? "ranks did not all complete the same block range" : "transfer failed",
                    OrderState.FAILED);
        } else if (parts.stream().anyMatch(p -> p.state() == PartState.UNCERTAIN)) {
            d.move(Trigger.PART_UNCERTAIN, null, "a part lost track of its transfer");
            d.orderState(OrderState.UNCERTAIN);
        }
        return d.done();
    }

    private static void deliver(LeaseDraft d, Collection<Part> parts) {
        LeaseRow row = d.row();
        LeaseAggregate.Parties now = d.parties();
        if (now.donorEpoch() != row.donorEpoch()
                || now.targetEpoch() != row.targetEpoch()
                || now.bankEpoch() != row.bankEpoch()) {
            d.signal(new LeaseDecision.Signal.Stale("lease"));
            fail(d, Trigger.EPOCH_CHANGED, "FENCED", "an epoch changed during the transfer", OrderState.DONE);
            return;
        }
        double realisedMs = parts.stream().mapToLong(Part::durationUs).max().orElse(0) / 1000.0;
        d.signal(new LeaseDecision.Signal.Delivered(
                row.domainId(),
                row.transportClass(),
                parts.iterator().next().bytes(),
                row.predictedTransferMs(),
                realisedMs));
        d.move(Trigger.PARTS_DONE, null, null);
        d.orderState(OrderState.DONE);
        d.issue(row.targetId(), CommandType.DELIVERED, -1);
    }

    private static void fail(LeaseDraft d, Trigger on, @Nullable String outcome, String reason, OrderState orderState) {
        d.move(on, outcome, reason);
        d.orderState(orderState);
        String released = d.row().outcome();
        d.release(Trigger.RELEASE, released == null ? "FAILED" : released, null);
    }

    /**
     * Quiescence evidence for one side; with both sides quiesced a lease that may be writing fails
     * and releases, unless an engine speaks while an agent part is not final: then a transferring
     * lease becomes UNCERTAIN and keeps everything held.
     */
    static LeaseDecision quiesced(LeaseDraft d, LeaseReport.Quiesced q) {
        d.quiesced(q.source());
        d.audit("QUIESCED", q.evidence(), Map.of("side", q.source() ? "SOURCE" : "DESTINATION"));
        LeaseRow row = d.row();
        if (!row.sourceQuiesced() || !row.destinationQuiesced() || !row.state().mayBeWriting()) {
            return d.done();
        }
        Order order = d.order();
        boolean agentOpen = order != null
                && order.parts().values().stream().anyMatch(p -> !p.state().isFinal());
        if (q.witness() != LeaseReport.Witness.ENGINE || !agentOpen) {
            d.move(Trigger.QUIESCED, null, "transfer quiesced on both sides");
            String outcome = d.row().outcome();
            d.release(Trigger.RELEASE, outcome == null ? "FAILED" : outcome, null);
        } else if (row.state() == LeaseState.TRANSFERRING) {
            d.move(
                    Trigger.ENGINES_QUIESCED,
                    null,
                    "engines declared quiescence while the agent's transfer part is not final");
            d.orderState(OrderState.UNCERTAIN);
        }
        return d.done();
    }

    private static KvReuseException noSuchPart(LeaseReport.Part p) {
        return new KvReuseException(ProblemType.NO_SUCH_PART, "order " + p.orderId() + " has no rank " + p.rank());
    }

    private static KvReuseException partFinal(LeaseReport.Part p, PartState current) {
        return new KvReuseException(
                        ProblemType.PART_FINAL,
                        "rank " + p.rank() + " of order " + p.orderId() + " is already " + current)
                .with("currentState", current.name());
    }
}
