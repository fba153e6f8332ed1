package io.kvreuse.lease;

import io.kvreuse.lease.LeaseAggregate.CommandState;
import io.kvreuse.lease.LeaseAggregate.CommandType;
import io.kvreuse.lease.LeaseAggregate.Destination;
import io.kvreuse.lease.LeaseMove.Trigger;
import io.kvreuse.region.DestinationRegions;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * The lease state machine as one pure function: (a lease as read, one report or sweep tick) → (the
 * lease after it, the changes to write, the audit and metric events, or a refusal). No I/O, no
 * clock: {@code now} comes in. Every move it makes is a row of {@link LeaseMove}. The target's
 * reports are decided here; engine acknowledgements in {@link AckRules}, the transfer in {@link
 * TransferRules}, deadlines and cleanup in {@link EndRules}.
 */
final class LeaseDecider {

    private LeaseDecider() {}

    static LeaseDecision decide(LeaseAggregate lease, LeaseReport report, String actor, Instant now) {
        LeaseDraft d = new LeaseDraft(lease, actor, now);
        return switch (report) {
            case LeaseReport.Ack a -> AckRules.ack(d, a);
            case LeaseReport.Destination x -> destination(d, x);
            case LeaseReport.Commit c -> commit(d, c.committedBlocks());
            case LeaseReport.Abort a -> abort(d, a.reason());
            case LeaseReport.OrderClaimed c -> TransferRules.claimed(d);
            case LeaseReport.Part p -> TransferRules.part(d, p);
            case LeaseReport.Quiesced q -> TransferRules.quiesced(d, q);
            case LeaseReport.Tick t -> EndRules.tick(d, t.now());
            case LeaseReport.Cleanup c -> EndRules.cleanup(d, c);
            case LeaseReport.Withdrawn w -> EndRules.withdrawn(d, w.reason());
        };
    }

    /** A destination on a lease still PROPOSED or SOURCE_PINNED under current epochs; the same one again changes nothing. */
    private static LeaseDecision destination(LeaseDraft d, LeaseReport.Destination x) {
        LeaseRow row = d.row();
        String invalid = invalid(x.ranks(), d.tp(), row.fetchBlocks());
        if (invalid != null) {
            return d.refuse(LeaseProblems.invalid(invalid));
        }
        if (row.state() != LeaseState.PROPOSED && row.state() != LeaseState.SOURCE_PINNED) {
            return d.refuse(LeaseProblems.wrongState(row.leaseId(), row.state(), "a destination"));
        }
        if (x.unregistered() != null) {
            return d.refuse(DestinationRegions.notRegistered(row.leaseId(), x.unregistered()));
        }
        if (d.parties().targetEpoch() != row.targetEpoch() || d.parties().donorEpoch() != row.donorEpoch()) {
            d.signal(new LeaseDecision.Signal.Stale("lease"));
            return d.refuse(fenced(d));
        }
        if (!d.destinations().isEmpty()) {
            return same(d.destinations(), x.ranks())
                    ? d.done()
                    : d.refuse(LeaseProblems.destinationDiffers(row.leaseId()));
        }
        x.ranks().forEach(d::destinationHeld);
        d.audit("DESTINATION_ALLOCATED", null, Map.of("ranks", x.ranks().size()));
        d.orderWhenReady();
        return d.done();
    }

    private static io.kvreuse.error.KvReuseException fenced(LeaseDraft d) {
        LeaseRow row = d.row();
        boolean target = d.parties().targetEpoch() != row.targetEpoch();
        return target
                ? LeaseProblems.leaseFenced(
                        row.leaseId(), "target", row.targetEpoch(), d.parties().targetEpoch())
                : LeaseProblems.leaseFenced(
                        row.leaseId(), "donor", row.donorEpoch(), d.parties().donorEpoch());
    }

    /** Why a destination is malformed: not exactly one entry per rank, or runs that do not hold the blocks. */
    static @Nullable String invalid(List<LeaseReport.RankDestination> ranks, int tp, int blocks) {
        Set<Integer> seen = new HashSet<>();
        for (LeaseReport.RankDestination r : ranks) {
            if (r.rank() < 0 || r.rank() >= tp || !seen.add(r.rank())) {
                return "a destination has exactly one entry per rank 0.." + (tp - 1);
            }
        }
        if (seen.size() != tp) {
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
                                        && SlotRuns.json(h.runs()).equals(SlotRuns.json(r.runs()))));
    }

    /** A commit of a delivery under the target's current epoch; the same commit again changes nothing. */
    private static LeaseDecision commit(LeaseDraft d, int blocks) {
        LeaseRow row = d.row();
        if (blocks > row.fetchBlocks()) {
            return d.refuse(LeaseProblems.invalid(
                    "committedBlocks " + blocks + " exceeds the " + row.fetchBlocks() + " fetched"));
        }
        if ("COMMITTED".equals(row.outcome()) && Objects.equals(row.committedBlocks(), blocks)) {
            return d.done();
        }
        if (row.state() != LeaseState.DELIVERED) {
            return d.refuse(LeaseProblems.wrongState(row.leaseId(), row.state(), "a commit"));
        }
        if (d.parties().targetEpoch() != row.targetEpoch()) {
            d.signal(new LeaseDecision.Signal.Stale("lease"));
            return d.refuse(fenced(d));
        }
        d.committedBlocks(blocks);
        d.lease().commands().stream()
                .filter(c -> c.type() == CommandType.DELIVERED)
                .forEach(c -> d.close(c.commandId(), CommandState.ACKED, "committed"));
        d.move(Trigger.COMMITTED, "COMMITTED", null);
        d.release(Trigger.RELEASE, "COMMITTED", null);
        d.signal(new LeaseDecision.Signal.Committed(blocks));
        return d.done();
    }

    /** The target gives up: released at once unless a transfer may be writing, which makes it UNCERTAIN. */
    private static LeaseDecision abort(LeaseDraft d, String reason) {
        switch (d.state()) {
            case PROPOSED, SOURCE_PINNED, DELIVERED -> {
                d.move(Trigger.ABORTED, "ABORTED", reason);
                d.release(Trigger.RELEASE, "ABORTED", null);
            }
            case TRANSFERRING -> d.move(Trigger.ABORTED, "ABORTED", reason);
            default -> {}
        }
        return d.done();
    }
}
