package io.kvreuse.lease;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.lease.LeaseAggregate.Command;
import io.kvreuse.lease.LeaseAggregate.CommandState;
import io.kvreuse.lease.LeaseAggregate.Destination;
import io.kvreuse.lease.LeaseAggregate.HoldState;
import io.kvreuse.lease.LeaseAggregate.Order;
import io.kvreuse.lease.LeaseAggregate.Part;
import io.kvreuse.lease.LeaseAggregate.Parties;
import io.kvreuse.lease.LeaseAggregate.Pin;
import io.kvreuse.protocol.PartState;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * Random interleavings of engine and agent reports, sweeps, crashes (a decision lost before it was
 * written; an engine restarted under a new epoch; a bank reset) and stale epochs, run on the
 * decider alone, with DESIGN's lease invariants checked after every step.
 */
class LeaseDeciderModelTests {

    private static final int WALKS = 4_000;
    private static final int STEPS = 40;
    private static final Set<LeaseState> FAILED_ENDS =
            EnumSet.of(LeaseState.FAILED, LeaseState.REFUSED, LeaseState.EXPIRED);
    /** The states a lease is in once it has ended, whether or not it still holds memory. */
    private static final Set<LeaseState> ENDED = EnumSet.of(
            LeaseState.COMMITTED,
            LeaseState.REFUSED,
            LeaseState.FAILED,
            LeaseState.EXPIRED,
            LeaseState.RELEASING,
            LeaseState.RELEASED);

    private static final Set<LeaseState> SUCCESS =
            EnumSet.of(LeaseState.SOURCE_PINNED, LeaseState.TRANSFERRING, LeaseState.DELIVERED, LeaseState.COMMITTED);

    @Test
    void randomInterleavingsKeepTheLeaseInvariants() {
        Random random = new Random(14);
        Set<LeaseMove> made = EnumSet.noneOf(LeaseMove.class);
        long decisions = 0;
        long start = System.nanoTime();
        for (int walk = 0; walk < WALKS; walk++) {
            decisions += walk(new Random(random.nextLong()), made);
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        System.out.printf(
                "lease model: %d walks, %d decisions in %.2f s: %.0f walks/s, %.0f decisions/s%n",
                WALKS, decisions, seconds, WALKS / seconds, decisions / seconds);
        assertThat(made).as("the walks made every move of the table").containsExactlyInAnyOrder(LeaseMove.values());
    }

    private static long walk(Random random, Set<LeaseMove> made) {
        LeaseFixture f = new LeaseFixture(1 + random.nextInt(3), random);
        boolean failed = false;
        int pace = new int[] {400, 1_500, 6_000}[random.nextInt(3)]; // how far a sweep tick moves the clock
        long decisions = 0;
        for (int step = 0; step < STEPS; step++) {
            LeaseReport report = next(f, random, pace);
            LeaseAggregate before = f.lease;
            LeaseDecision d = LeaseDecider.decide(before, report, LeaseFixture.ACTOR, f.now);
            decisions++;
            if (random.nextInt(20) == 0) {
                continue; // the replica crashed before the decision was written: nothing happened
            }
            check(before, report, d, failed);
            LeaseMoveTests.moves(d).forEach(made::add);
            failed |= FAILED_ENDS.contains(d.state())
                    || LeaseMoveTests.moves(d).stream().anyMatch(m -> FAILED_ENDS.contains(m.to));
            f.lease = d.after();
        }
        return decisions;
    }

    /** One random report, sweep or crash, mostly one that fits the lease as it stands; a tick moves the clock up to {@code pace} ms. */
    private static LeaseReport next(LeaseFixture f, Random random, int pace) {
        LeaseAggregate lease = f.lease;
        if (lease.row().state() == LeaseState.TRANSFERRING && random.nextInt(12) == 0) {
            crash(f, random); // an engine restarts or the bank resets while the agent moves the blocks
            return part(f.lease, random);
        }
        if (lease.row().state() == LeaseState.DELIVERED && random.nextInt(6) == 0) {
            f.now = f.now.plus(Duration.ofMillis(random.nextInt(6_000))); // the target is slow to commit
            return new LeaseReport.Tick(f.now);
        }
        int pick = random.nextInt(100);
        if (pick < 30) {
            return ack(lease, random);
        }
        if (pick < 38) {
            return destination(lease, random);
        }
        if (pick < 44) {
            return new LeaseReport.OrderClaimed();
        }
        if (pick < 62) {
            return part(lease, random);
        }
        if (pick < 68) {
            return new LeaseReport.Commit(random.nextInt(LeaseFixture.BLOCKS + 2));
        }
        if (pick < 71) {
            return new LeaseReport.Abort("aborted");
        }
        if (pick < 76) {
            LeaseReport.Witness[] witnesses = LeaseReport.Witness.values();
            return new LeaseReport.Quiesced(
                    random.nextBoolean(), witnesses[random.nextInt(witnesses.length)], "evidence");
        }
        if (pick < 77) {
            return new LeaseReport.Withdrawn("selection gave up");
        }
        if (pick < 78) {
            return new LeaseReport.Cleanup(
                    random.nextBoolean() ? lease.row().donorId() : lease.row().targetId(), "operator cleanup");
        }
        if (pick < 86) {
            crash(f, random);
        }
        f.now = f.now.plus(Duration.ofMillis(random.nextInt(pace)));
        return new LeaseReport.Tick(f.now);
    }

    /** An engine restarted (a new epoch), or the bank was reset or dropped. */
    private static void crash(LeaseFixture f, Random random) {
        Parties p = f.lease.parties();
        Parties now = switch (random.nextInt(4)) {
            case 0 -> new Parties(p.donorEpoch() + 1, p.targetEpoch(), p.bankEpoch(), p.bankDropped(), p.partBytes());
            case 1 -> new Parties(p.donorEpoch(), p.targetEpoch() + 1, p.bankEpoch(), p.bankDropped(), p.partBytes());
            case 2 -> new Parties(p.donorEpoch(), p.targetEpoch(), p.bankEpoch() + 1, p.bankDropped(), p.partBytes());
            default -> new Parties(p.donorEpoch(), p.targetEpoch(), p.bankEpoch(), true, p.partBytes());
        };
        f.parties(now);
    }

    private static LeaseReport ack(LeaseAggregate lease, Random random) {
        List<Command> commands = lease.commands();
        if (commands.isEmpty() || random.nextInt(25) == 0) {
            return new LeaseReport.Ack(lease.row().donorId(), LeaseFixture.uuid(random), true, null, true);
        }
        List<Command> open =
                commands.stream().filter(c -> c.state() == CommandState.OPEN).toList();
        Command c = open.isEmpty() || random.nextInt(6) == 0
                ? commands.get(random.nextInt(commands.size()))
                : open.get(random.nextInt(open.size()));
        boolean ok = random.nextInt(8) != 0;
        return new LeaseReport.Ack(c.incarnationId(), c.commandId(), ok, ok ? null : "no", random.nextInt(10) != 0);
    }

    private static LeaseReport destination(LeaseAggregate lease, Random random) {
        List<LeaseReport.RankDestination> ranks = new ArrayList<>();
        int count = random.nextInt(10) == 0 ? lease.tp() + 1 : lease.tp();
        int slot = random.nextInt(3) * 8;
        for (int rank = 0; rank < count; rank++) {
            ranks.add(new LeaseReport.RankDestination(
                    rank, "region-" + rank, new int[][] {{slot, LeaseFixture.BLOCKS}}));
        }
        return new LeaseReport.Destination(ranks, random.nextInt(15) == 0 ? "region-0 is not registered" : null);
    }

    private static LeaseReport part(LeaseAggregate lease, Random random) {
        Order order = lease.order();
        PartState[] reported = {
            PartState.RUNNING,
            PartState.DONE,
            PartState.DONE,
            PartState.DONE,
            PartState.FAILED,
            PartState.UNCERTAIN,
            PartState.QUIESCED
        };
        PartState state = reported[random.nextInt(reported.length)];
        long bytes = switch (random.nextInt(6)) {
            case 0 -> random.nextInt((int) LeaseFixture.PART_BYTES);
            case 1 -> LeaseFixture.PART_BYTES + 1;
            default -> LeaseFixture.PART_BYTES;
        };
        return new LeaseReport.Part(
                order == null || random.nextInt(30) == 0 ? LeaseFixture.uuid(random) : order.orderId(),
                random.nextInt(lease.tp() + (random.nextInt(20) == 0 ? 1 : 0)),
                state,
                bytes,
                random.nextInt(5_000),
                null,
                null);
    }

    /** DESIGN §3's invariants for one decision. */
    private static void check(LeaseAggregate before, LeaseReport report, LeaseDecision d, boolean failedBefore) {
        LeaseAggregate after = d.after();
        List<LeaseMove> moves = LeaseMoveTests.moves(d);
        Supplier<String> where = () ->
                before.row().state() + " on " + report + " → " + after.row().state() + " " + moves;
        LeaseState at = before.row().state();
        for (LeaseMove m : moves) {
            assertThat(m.from)
                    .as(() -> "moves follow each other: " + where.get())
                    .isEqualTo(at);
            at = m.to;
        }
        assertThat(at).as(where).isEqualTo(after.row().state());
        assertThat(after.row().version()).as(where).isEqualTo(before.row().version() + moves.size());
        if (d.problem() != null && d.changes().isEmpty()) {
            assertThat(after)
                    .as(() -> "a refusal changes nothing: " + where.get())
                    .isEqualTo(before);
        }
        delivered(before, after, moves, where);
        released(before, report, after, moves, where);
        outcome(before, after, moves, where);
        if (report instanceof LeaseReport.Tick && before.row().state() == LeaseState.UNCERTAIN) {
            assertThat(d.changes())
                    .as(() -> "UNCERTAIN never times out: " + where.get())
                    .isEmpty();
        }
        if (failedBefore) {
            assertThat(moves)
                    .as(() -> "nothing revives a failed lease: " + where.get())
                    .noneMatch(m -> SUCCESS.contains(m.to));
        }
        if (before.row().state().isTerminal()) {
            assertThat(after.row().state())
                    .as(() -> "terminal stays terminal: " + where.get())
                    .isEqualTo(before.row().state());
            assertThat(after.pins()).isEqualTo(before.pins());
            assertThat(after.destinations()).isEqualTo(before.destinations());
            assertThat(after.commands()).isEqualTo(before.commands());
            // a late part report is still recorded on its part; the order and the lease stay as they are
            assertThat(after.order() == null ? null : after.order().state())
                    .isEqualTo(before.order() == null ? null : before.order().state());
        }
        if (after.row().state() == LeaseState.RELEASED) {
            assertThat(after.holdsAnything())
                    .as(() -> "RELEASED holds nothing: " + where.get())
                    .isFalse();
        }
        assertThat(after.pins()).hasSizeLessThanOrEqualTo(after.tp());
        assertThat(after.destinations()).hasSizeLessThanOrEqualTo(after.tp());
    }

    /**
     * A lease that has ended carries how it ended, and keeps it: a commit is COMMITTED, a refusal
     * REFUSED, an expiry EXPIRED; a lease still under way has none, unless an abort decided it while
     * the transfer may still be writing (UNCERTAIN, outcome ABORTED).
     */
    private static void outcome(
            LeaseAggregate before, LeaseAggregate after, List<LeaseMove> moves, Supplier<String> where) {
        LeaseOutcome outcome = after.row().outcome();
        if (ENDED.contains(after.row().state())) {
            assertThat(outcome)
                    .as(() -> "an ended lease says how: " + where.get())
                    .isNotNull();
        } else if (after.row().state() != LeaseState.UNCERTAIN) {
            assertThat(outcome)
                    .as(() -> "a lease under way has no outcome: " + where.get())
                    .isNull();
        } else {
            assertThat(outcome).as(where).isIn(null, LeaseOutcome.ABORTED);
        }
        if (ENDED.contains(before.row().state())) {
            assertThat(outcome)
                    .as(() -> "an outcome stays: " + where.get())
                    .isEqualTo(before.row().outcome());
        }
        if (after.row().state() == LeaseState.EXPIRED) {
            assertThat(outcome).as(where).isEqualTo(LeaseOutcome.EXPIRED);
        }
        for (LeaseState s : List.of(LeaseState.COMMITTED, LeaseState.REFUSED)) {
            if (moves.stream().anyMatch(m -> m.to == s)) {
                assertThat(outcome).as(where).hasToString(s.name());
            }
        }
    }

    /** DELIVERED only when every rank part is DONE for the same, full range under the lease's epochs. */
    private static void delivered(
            LeaseAggregate before, LeaseAggregate after, List<LeaseMove> moves, Supplier<String> where) {
        if (moves.stream().noneMatch(m -> m.to == LeaseState.DELIVERED)) {
            return;
        }
        Order order = after.order();
        assertThat(order).as(where).isNotNull();
        assertThat(order.parts()).as(where).hasSize(after.tp());
        assertThat(order.parts().values()).as(where).allMatch(Part::complete);
        assertThat(after.parties().bankEpoch()).isEqualTo(after.row().bankEpoch());
        assertThat(after.partiesCurrent()).as(where).isTrue();
        assertThat(before.row().state()).isEqualTo(LeaseState.TRANSFERRING);
    }

    /**
     * Pins and allocations leave HELD only with the lease in RELEASING, and never while a transfer
     * may still be writing unless there is evidence: every part final, both sides quiesced, or an
     * operator's cleanup.
     */
    private static void released(
            LeaseAggregate before,
            LeaseReport report,
            LeaseAggregate after,
            List<LeaseMove> moves,
            Supplier<String> where) {
        boolean released = left(
                        before.pins().stream().map(p -> key(p)).toList(),
                        after.pins().stream().map(p -> key(p)).toList())
                || leftDestinations(before.destinations(), after.destinations());
        if (!released) {
            return;
        }
        boolean throughReleasing = before.row().state() == LeaseState.RELEASING
                || moves.stream().anyMatch(m -> m.to == LeaseState.RELEASING);
        assertThat(throughReleasing)
                .as(() -> "released only through RELEASING: " + where.get())
                .isTrue();
        if (before.row().state().mayBeWriting()) {
            Order order = after.order();
            boolean partsFinal = order != null
                    && order.parts().values().stream().allMatch(p -> p.state().isFinal());
            boolean quiesced = after.row().sourceQuiesced() && after.row().destinationQuiesced();
            boolean cleanup = report instanceof LeaseReport.Cleanup;
            assertThat(partsFinal || quiesced || cleanup)
                    .as(() -> "released while a transfer may be writing only after quiescence: " + where.get())
                    .isTrue();
        }
    }

    private static String key(Pin p) {
        return p.rank() + "/" + p.state();
    }

    /** Whether a hold that was HELD before is no longer HELD. */
    private static boolean left(List<String> before, List<String> after) {
        return before.stream().filter(k -> k.endsWith("/" + HoldState.HELD)).anyMatch(k -> !after.contains(k));
    }

    private static boolean leftDestinations(List<Destination> before, List<Destination> after) {
        return before.stream()
                .filter(d -> d.state() == HoldState.HELD)
                .anyMatch(d -> after.stream().noneMatch(a -> a.rank() == d.rank() && a.state() == HoldState.HELD));
    }
}
