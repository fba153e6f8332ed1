package io.kvreuse.lease;

import io.kvreuse.domain.TransportClass;
import io.kvreuse.lease.LeaseAggregate.Command;
import io.kvreuse.lease.LeaseAggregate.CommandState;
import io.kvreuse.lease.LeaseAggregate.CommandType;
import io.kvreuse.lease.LeaseAggregate.Parties;
import io.kvreuse.protocol.PartState;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.UUID;

/**
 * A lease for the decider's unit tests, driven only through the decider: a fresh PROPOSED lease of
 * {@code tp} ranks with its open PIN commands, and the reports that move it along.
 */
final class LeaseFixture {

    static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");
    static final Duration TTL = Duration.ofSeconds(1);
    static final Duration TRANSFER = Duration.ofSeconds(5);
    static final Duration ABANDON = Duration.ofSeconds(10);
    static final int BLOCKS = 4;
    static final long PART_BYTES = 4096;
    static final String ACTOR = "test";

    LeaseAggregate lease;
    Instant now = T0;
    final List<LeaseDecision> decisions = new ArrayList<>();

    LeaseFixture(int tp, Random random) {
        UUID leaseId = uuid(random);
        UUID donor = uuid(random);
        UUID target = uuid(random);
        long[] hashes = random.longs(BLOCKS).toArray();
        LeaseRow row = new LeaseRow(
                leaseId,
                "request-" + leaseId,
                LeaseState.PROPOSED,
                null,
                null,
                "domain",
                donor,
                1,
                uuid(random),
                1,
                target,
                1,
                0,
                BLOCKS,
                hashes,
                new int[][] {{0, BLOCKS}},
                TransportClass.GPU_CUDA_IPC,
                2.0,
                10.0,
                null,
                false,
                false,
                T0,
                T0.plus(TTL),
                T0.plus(TRANSFER),
                T0.plus(ABANDON),
                T0,
                1);
        List<Command> pins = new ArrayList<>();
        for (int rank = 0; rank < tp; rank++) {
            pins.add(new Command(
                    Command.idFor(leaseId, CommandType.PIN, rank), donor, CommandType.PIN, rank, CommandState.OPEN));
        }
        lease = new LeaseAggregate(row, tp, List.of(), List.of(), pins, null, new Parties(1, 1, 1, false, PART_BYTES));
    }

    static UUID uuid(Random random) {
        return new UUID(random.nextLong(), random.nextLong());
    }

    /** Decides the report on the lease as it stands and keeps the result. */
    LeaseDecision report(LeaseReport report) {
        LeaseDecision d = LeaseDecider.decide(lease, report, ACTOR, now);
        decisions.add(d);
        lease = d.after();
        return d;
    }

    LeaseRow row() {
        return lease.row();
    }

    LeaseState state() {
        return lease.row().state();
    }

    /** Acknowledges the lease's open command of this type and rank. */
    LeaseDecision ack(CommandType type, int rank, boolean ok) {
        Command c = lease.commands().stream()
                .filter(x -> x.type() == type && x.rank() == rank)
                .findFirst()
                .orElseThrow();
        return report(new LeaseReport.Ack(c.incarnationId(), c.commandId(), ok, ok ? null : "evicted", true));
    }

    LeaseDecision destination() {
        List<LeaseReport.RankDestination> ranks = new ArrayList<>();
        for (int rank = 0; rank < lease.tp(); rank++) {
            ranks.add(new LeaseReport.RankDestination(rank, "region-" + rank, new int[][] {{8, BLOCKS}}));
        }
        return report(new LeaseReport.Destination(ranks, null));
    }

    /** PROPOSED → SOURCE_PINNED with every rank pinned and the destination held: the order is queued. */
    LeaseFixture pinned() {
        destination();
        for (int rank = 0; rank < lease.tp(); rank++) {
            ack(CommandType.PIN, rank, true);
        }
        return this;
    }

    LeaseFixture transferring() {
        pinned();
        report(new LeaseReport.OrderClaimed());
        return this;
    }

    LeaseDecision part(int rank, PartState state, long bytes) {
        LeaseAggregate.Order order = lease.order();
        if (order == null) {
            throw new IllegalStateException("no order yet");
        }
        return report(new LeaseReport.Part(order.orderId(), rank, state, bytes, 1500, null, null));
    }

    LeaseFixture delivered() {
        transferring();
        for (int rank = 0; rank < lease.tp(); rank++) {
            part(rank, PartState.DONE, PART_BYTES);
        }
        return this;
    }

    LeaseFixture uncertain() {
        transferring();
        return tick(TRANSFER.plusMillis(1));
    }

    LeaseFixture tick(Duration after) {
        now = T0.plus(after);
        report(new LeaseReport.Tick(now));
        return this;
    }

    /** The parties now: the donor, the target or the bank fenced since the lease was made. */
    LeaseFixture parties(Parties parties) {
        lease = new LeaseAggregate(
                lease.row(), lease.tp(), lease.pins(), lease.destinations(), lease.commands(), lease.order(), parties);
        return this;
    }
}
