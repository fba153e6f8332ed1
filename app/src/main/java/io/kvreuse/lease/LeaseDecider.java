package io.kvreuse.lease;

import io.kvreuse.error.KvReuseException;
import io.kvreuse.error.ProblemType;
import io.kvreuse.lease.LeaseAggregate.Command;
import io.kvreuse.lease.LeaseAggregate.CommandState;
import io.kvreuse.lease.LeaseAggregate.CommandType;
import io.kvreuse.lease.LeaseAggregate.Destination;
import io.kvreuse.lease.LeaseAggregate.HoldState;
import io.kvreuse.lease.LeaseAggregate.Order;
import io.kvreuse.lease.LeaseAggregate.OrderState;
import io.kvreuse.lease.LeaseAggregate.Part;
import io.kvreuse.lease.LeaseAggregate.Parties;
import io.kvreuse.lease.LeaseMove.Trigger;
import io.kvreuse.protocol.PartState;
import io.kvreuse.region.DestinationRegions;
import java.time.Instant;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;

/**
 * The lease state machine as one pure function: (a lease as read, one report or sweep tick) → (the
 * lease after it, the changes to write, the audit and metric events, or a refusal). No I/O, no
 * clock: {@code now} comes in. Every move it makes is a row of {@link LeaseMove}; a move into a
 * state the table releases from is followed by the release ({@link LeaseDraft#move}).
 */
final class LeaseDecider {

    private LeaseDecider() {}

    static LeaseDecision decide(LeaseAggregate lease, LeaseReport report, String actor, Instant now) {
        LeaseDraft d = new LeaseDraft(lease, actor, now);
        return switch (report) {
            case LeaseReport.Ack a -> ack(d, a);
            case LeaseReport.Destination x -> destination(d, x);
            case LeaseReport.Commit c -> commit(d, c.committedBlocks());
            case LeaseReport.Part p -> part(d, p);
            case LeaseReport.Quiesced q -> quiesced(d, q);
            case LeaseReport.Tick t -> tick(d, t.now());
            case LeaseReport.Cleanup c -> cleanup(d, c);
            case LeaseReport.Withdrawn w -> withdrawn(d, w.reason());
            case LeaseReport.Abort a ->
                d.moveIf(Trigger.ABORTED, LeaseOutcome.ABORTED, a.reason()).done();
            case LeaseReport.OrderClaimed c ->
                d.claimed().moveIf(Trigger.ORDER_CLAIMED, null, null).done();
        };
    }

    /**
     * An engine's acknowledgement. A PIN holds only while the lease is PROPOSED under the epochs it was
     * made with and the bank still holds every block at its slot; otherwise the lease is REFUSED. An
     * UNPIN or RELEASE confirmation releases exactly once; a refused one leaves the command open, to
     * be handed out again. An acknowledgement seen before is a duplicate.
     */
    private static LeaseDecision ack(LeaseDraft d, LeaseReport.Ack a) {
        Command c = d.read.command(a.commandId());
        if (c == null || !c.incarnationId().equals(a.incarnationId())) {
            return d.refuse(LeaseProblems.noSuchCommand(a.commandId()));
        }
        if (c.state() != CommandState.OPEN) {
            return d.done(null, c.type() == CommandType.PIN ? d.pin(c.rank()) == HoldState.HELD : null, true);
        }
        if (c.type() == CommandType.PIN || c.type() == CommandType.DELIVERED) {
            d.close(c.commandId(), a.ok() ? CommandState.ACKED : CommandState.REFUSED, a.detail());
            return c.type() == CommandType.PIN ? pin(d, c.rank(), a) : d.done();
        }
        if (a.ok()) {
            if (c.type() == CommandType.RELEASE) {
                d.destinationsState(HoldState.RELEASING, HoldState.RELEASED);
            } else if (d.pin(c.rank()) == HoldState.RELEASING) {
                d.pinState(c.rank(), HoldState.RELEASED);
            }
            d.settle();
            d.close(c.commandId(), CommandState.ACKED, a.detail());
        }
        return d.done();
    }

    private static LeaseDecision pin(LeaseDraft d, int rank, LeaseReport.Ack a) {
        LeaseRow row = d.row;
        Parties now = d.read.parties();
        if (row.state() != LeaseState.PROPOSED) {
            return d.done(LeaseProblems.wrongState(row.leaseId(), row.state(), "a PIN"), false, false);
        }
        if (!a.ok()) {
            return refusePin(d, "donor refused the pin" + (a.detail() == null ? "" : ": " + a.detail()), null);
        }
        if (now.donorEpoch() != row.donorEpoch()) {
            d.signal(new LeaseDecision.Signal.Stale("lease"));
            return refusePin(
                    d,
                    "donor fenced since the lease was made",
                    LeaseProblems.leaseFenced(row.leaseId(), "donor", row.donorEpoch(), now.donorEpoch()));
        }
        if (now.bankEpoch() != row.bankEpoch() || now.bankDropped()) {
            d.signal(new LeaseDecision.Signal.Stale("bank"));
            return refusePin(
                    d,
                    "bank reset or dropped since the lease was made",
                    LeaseProblems.leaseFenced(row.leaseId(), "bank", row.bankEpoch(), now.bankEpoch()));
        }
        if (!a.blocksAtSlots()) {
            return refusePin(d, "the bank no longer holds every block at its slot", null);
        }
        if (d.pin(rank) == null) {
            d.pinHeld(rank);
        }
        if (d.lease().pins().size() >= d.read.tp()) {
            d.move(Trigger.PIN_HELD, null, null);
            d.orderWhenReady();
        }
        return d.done(null, true, false);
    }

    private static LeaseDecision refusePin(LeaseDraft d, String reason, @Nullable KvReuseException after) {
        d.move(Trigger.PIN_REFUSED, LeaseOutcome.REFUSED, reason);
        return d.done(after, false, false);
    }

    /** A destination on a lease still PROPOSED or SOURCE_PINNED under current epochs; the same one again changes nothing. */
    private static LeaseDecision destination(LeaseDraft d, LeaseReport.Destination x) {
        LeaseRow row = d.row;
        String invalid = invalid(x.ranks(), d.read.tp(), row.fetchBlocks());
        if (invalid != null) {
            return d.refuse(LeaseProblems.invalid(invalid));
        }
        if (row.state() != LeaseState.PROPOSED && row.state() != LeaseState.SOURCE_PINNED) {
            return d.refuse(LeaseProblems.wrongState(row.leaseId(), row.state(), "a destination"));
        }
        if (x.unregistered() != null) {
            return d.refuse(DestinationRegions.notRegistered(row.leaseId(), x.unregistered()));
        }
        if (!d.read.partiesCurrent()) {
            return d.stale("lease", fenced(d));
        }
        if (!d.read.destinations().isEmpty()) {
            return same(d.read.destinations(), x.ranks())
                    ? d.done()
                    : d.refuse(LeaseProblems.destinationDiffers(row.leaseId()));
        }
        x.ranks().forEach(d::destinationHeld);
        d.audit("DESTINATION_ALLOCATED", null, Map.of("ranks", x.ranks().size()));
        d.orderWhenReady();
        return d.done();
    }

    private static KvReuseException fenced(LeaseDraft d) {
        LeaseRow row = d.row;
        Parties now = d.read.parties();
        return now.targetEpoch() != row.targetEpoch()
                ? LeaseProblems.leaseFenced(row.leaseId(), "target", row.targetEpoch(), now.targetEpoch())
                : LeaseProblems.leaseFenced(row.leaseId(), "donor", row.donorEpoch(), now.donorEpoch());
    }

    /** Why a destination is malformed: not exactly one entry per rank, or runs that do not hold the blocks. */
    private static @Nullable String invalid(List<LeaseReport.RankDestination> ranks, int tp, int blocks) {
        Set<Integer> seen =
                ranks.stream().map(LeaseReport.RankDestination::rank).collect(Collectors.toSet());
        if (ranks.size() != tp || seen.size() != tp || seen.stream().anyMatch(r -> r < 0 || r >= tp)) {
            return "a destination has exactly one entry per rank 0.." + (tp - 1);
        }
        for (LeaseReport.RankDestination r : ranks) {
            String problem = SlotRuns.problem(r.runs(), blocks);
            if (problem != null) {
                return "rank " + r.rank() + ": " + problem;
            }
        }
        return null;
    }

    private static boolean same(List<Destination> held, List<LeaseReport.RankDestination> ranks) {
        return held.size() == ranks.size()
                && ranks.stream()
                        .allMatch(r -> held.stream()
                                .anyMatch(h -> h.rank() == r.rank()
                                        && h.regionRef().equals(r.regionRef())
                                        && Arrays.deepEquals(h.runs(), r.runs())));
    }

    /** A commit of a delivery under the target's current epoch; the same commit again changes nothing. */
    private static LeaseDecision commit(LeaseDraft d, int blocks) {
        LeaseRow row = d.row;
        if (blocks > row.fetchBlocks()) {
            return d.refuse(LeaseProblems.invalid(
                    "committedBlocks " + blocks + " exceeds the " + row.fetchBlocks() + " fetched"));
        }
        if (row.outcome() == LeaseOutcome.COMMITTED && Objects.equals(row.committedBlocks(), blocks)) {
            return d.done();
        }
        if (row.state() != LeaseState.DELIVERED) {
            return d.refuse(LeaseProblems.wrongState(row.leaseId(), row.state(), "a commit"));
        }
        if (d.read.parties().targetEpoch() != row.targetEpoch()) {
            return d.stale("lease", fenced(d));
        }
        d.row = d.row.reported(blocks, d.row.sourceQuiesced(), d.row.destinationQuiesced());
        d.closeAll(CommandType.DELIVERED, CommandState.ACKED, "committed");
        d.move(Trigger.COMMITTED, LeaseOutcome.COMMITTED, null);
        d.signal(new LeaseDecision.Signal.Committed(blocks));
        return d.done();
    }

    /** A part report; one on a part already final answers as is if it says the same, 409 otherwise. */
    private static LeaseDecision part(LeaseDraft d, LeaseReport.Part p) {
        Order order = d.order;
        Part part = order == null || !order.orderId().equals(p.orderId())
                ? null
                : order.parts().get(p.rank());
        if (part == null) {
            return d.refuse(new KvReuseException(
                    ProblemType.NO_SUCH_PART, "order " + p.orderId() + " has no rank " + p.rank()));
        }
        if (p.bytes() > part.bytes()) {
            return d.refuse(LeaseProblems.invalid("bytes " + p.bytes() + " exceeds the part's " + part.bytes()));
        }
        if (part.state().isFinal() && part.state() != p.state()) {
            return d.refuse(new KvReuseException(
                            ProblemType.PART_FINAL,
                            "rank " + p.rank() + " of order " + p.orderId() + " is already " + part.state())
                    .with("currentState", part.state().name()));
        }
        if (!part.state().isFinal()) {
            d.part(p, part);
        }
        transfer(d, Objects.requireNonNull(d.order).parts().values());
        return d.done();
    }

    /**
     * Decides a lease that may be writing from its parts as they now stand. DELIVERED only when every
     * rank is DONE for the full range under unchanged donor, target and bank epochs; when every part
     * stopped otherwise the lease FAILS (ranks must all hold the same blocks, so no shorter prefix is
     * offered). A part that lost track makes the lease UNCERTAIN; from there even late DONE reports
     * end it only as FAILED.
     */
    private static void transfer(LeaseDraft d, Collection<Part> parts) {
        boolean stopped = parts.stream().allMatch(p -> p.state().isFinal());
        if (!d.row.state().mayBeWriting() || parts.isEmpty()) {
            return;
        }
        if (d.row.state() == LeaseState.UNCERTAIN) {
            if (stopped) {
                d.orderState(OrderState.QUIESCED);
                d.move(Trigger.PARTS_STOPPED, null, "transfer stopped after it was uncertain");
            }
        } else if (parts.stream().allMatch(Part::complete)) {
            deliver(d, parts);
        } else if (stopped) {
            boolean partial = parts.stream().anyMatch(p -> p.state() == PartState.DONE);
            d.orderState(OrderState.FAILED);
            d.move(
                    Trigger.PARTS_STOPPED,
                    partial ? LeaseOutcome.PARTIAL : LeaseOutcome.FAILED,
                    partial ? "ranks did not all complete the same block range" : "transfer failed");
        } else if (parts.stream().anyMatch(p -> p.state() == PartState.UNCERTAIN)) {
            d.move(Trigger.PART_UNCERTAIN, null, "a part lost track of its transfer");
            d.orderState(OrderState.UNCERTAIN);
        }
    }

    private static void deliver(LeaseDraft d, Collection<Part> parts) {
        LeaseRow row = d.row;
        if (!d.read.partiesCurrent() || d.read.parties().bankEpoch() != row.bankEpoch()) {
            d.signal(new LeaseDecision.Signal.Stale("lease"));
            d.orderState(OrderState.DONE);
            d.move(Trigger.EPOCH_CHANGED, LeaseOutcome.FENCED, "an epoch changed during the transfer");
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

    /**
     * Quiescence evidence for one side; with both sides quiesced a lease that may be writing fails
     * and releases, unless an engine speaks while an agent part is not final (no engine's evidence
     * overrides the agent): then a transferring lease becomes UNCERTAIN and keeps everything held.
     */
    private static LeaseDecision quiesced(LeaseDraft d, LeaseReport.Quiesced q) {
        d.row = d.row.reported(
                d.row.committedBlocks(),
                d.row.sourceQuiesced() || q.source(),
                d.row.destinationQuiesced() || !q.source());
        d.audit("QUIESCED", q.evidence(), Map.of("side", q.source() ? "SOURCE" : "DESTINATION"));
        LeaseRow row = d.row;
        if (!row.sourceQuiesced() || !row.destinationQuiesced() || !row.state().mayBeWriting()) {
            return d.done();
        }
        boolean agentOpen = d.order != null
                && d.order.parts().values().stream().anyMatch(p -> !p.state().isFinal());
        if (q.witness() != LeaseReport.Witness.ENGINE || !agentOpen) {
            d.move(Trigger.QUIESCED, null, "transfer quiesced on both sides");
        } else if (row.state() == LeaseState.TRANSFERRING) {
            d.move(
                    Trigger.ENGINES_QUIESCED,
                    null,
                    "engines declared quiescence while the agent's transfer part is not final");
            d.orderState(OrderState.UNCERTAIN);
        }
        return d.done();
    }

    /**
     * Deadlines as of the sweeper's {@code now}: PROPOSED past its TTL expires (or releases what a few
     * ranks pinned); a source pinned but never transferred is released; a transfer past its deadline
     * becomes UNCERTAIN and keeps every pin and allocation (no timer releases it); a delivery never
     * committed is abandoned.
     */
    private static LeaseDecision tick(LeaseDraft d, Instant now) {
        LeaseRow row = d.row;
        Instant deadline = switch (row.state()) {
            case PROPOSED -> row.ttlDeadline();
            case SOURCE_PINNED, TRANSFERRING -> row.transferDeadline();
            case DELIVERED -> row.abandonDeadline();
            default -> Instant.MAX;
        };
        if (!deadline.isBefore(now)) {
            return d.done();
        }
        switch (row.state()) {
            case PROPOSED -> {
                Trigger on = d.read.holdsAnything() ? Trigger.TTL_PASSED_HOLDING : Trigger.TTL_PASSED;
                d.move(on, LeaseOutcome.EXPIRED, "lease TTL passed");
            }
            case SOURCE_PINNED ->
                d.move(Trigger.TRANSFER_DEADLINE, LeaseOutcome.EXPIRED, "source pinned but never transferred");
            case TRANSFERRING -> {
                d.move(Trigger.TRANSFER_DEADLINE, null, "transfer deadline passed");
                d.orderState(OrderState.UNCERTAIN);
            }
            default -> d.move(Trigger.ABANDON_DEADLINE, LeaseOutcome.ABANDONED, "delivered but never committed");
        }
        return d.done();
    }

    /** A proposal selection gave up on ends at once if it is still PROPOSED or only pinned. */
    private static LeaseDecision withdrawn(LeaseDraft d, String reason) {
        if (d.row.state() == LeaseState.PROPOSED && d.read.holdsAnything()) {
            d.move(Trigger.WITHDRAWN_HOLDING, LeaseOutcome.WITHDRAWN, reason);
        } else {
            d.moveIf(
                    Trigger.WITHDRAWN,
                    d.row.state() == LeaseState.PROPOSED ? LeaseOutcome.EXPIRED : LeaseOutcome.WITHDRAWN,
                    reason);
        }
        return d.done();
    }

    /**
     * Operator cleanup of a fenced incarnation (quiescence proven or attested): the lease ends; what
     * the fenced side held is released at once (its process is gone), what a live other side holds
     * through the normal UNPIN and RELEASE commands.
     */
    private static LeaseDecision cleanup(LeaseDraft d, LeaseReport.Cleanup c) {
        LeaseRow row = d.row;
        if (row.state().isTerminal()) {
            return d.done();
        }
        d.orderState(OrderState.FAILED);
        boolean releasable = LeaseMove.of(row.state(), Trigger.RELEASE).isPresent();
        d.moveIf(releasable ? Trigger.RELEASE : Trigger.RECLAIMED, LeaseOutcome.RECLAIMED, c.reason());
        if (row.donorId().equals(c.fencedIncarnation())) {
            d.lease().pins().stream()
                    .filter(p -> p.state() == HoldState.RELEASING)
                    .forEach(p -> d.pinState(p.rank(), HoldState.RELEASED));
            d.closeAll(CommandType.UNPIN, CommandState.WITHDRAWN, "withdrawn");
        }
        if (row.targetId().equals(c.fencedIncarnation())) {
            d.destinationsState(HoldState.RELEASING, HoldState.RELEASED);
            d.closeAll(CommandType.RELEASE, CommandState.WITHDRAWN, "withdrawn");
        }
        d.settle();
        return d.done();
    }
}
