package io.kvreuse.lease;

import io.kvreuse.audit.AuditTrail;
import io.kvreuse.bank.BlockPins;
import io.kvreuse.domain.TransferCalibration;
import io.kvreuse.lease.LeaseAggregate.CommandState;
import io.kvreuse.lease.LeaseAggregate.HoldState;
import io.kvreuse.lease.LeaseAggregate.OrderState;
import io.kvreuse.store.ArrayLiteral;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;

/**
 * Writes the decisions of a batch in one statement, whatever the batch's size (a single report is a
 * batch of one): one data-modifying CTE per kind of change that has rows, the per-row values passed
 * as arrays ({@code unnest}); the bank's pin counts and the audit rows are their owners' fragments.
 * The CTEs see one snapshot, so none reads what a sibling writes: a row that several decisions of
 * the batch change is written once, from its state as read to its last (a pin, destination or order
 * created in the batch is inserted at its last state, and a new order's parts take the batch's new
 * destinations from the arrays). Each lease row is written at its final state, conditional on the
 * version its aggregate was read at; the statement answers how many were, and fewer fails the
 * transaction. Metric events are counted once it committed ({@link #published}).
 */
@Component
class LeaseWriter {

    /**
     * Shards of a party's {@code lease_inflight_end} counter (V82): each statement adds to one, picked
     * at random, so concurrent lease transactions of one party seldom wait on each other's row.
     */
    static final int END_SHARDS = 16;

    private static final String PARTS = """
            parts AS (UPDATE transfer_part p SET state = m.s, bytes_moved = m.b, duration_us = m.d, native_status = m.n,
                    detail = m.detail, updated_at = :now
                FROM unnest(CAST(:part_o AS UUID[]), CAST(:part_r AS INTEGER[]), CAST(:part_s AS TEXT[]), CAST(:part_b AS BIGINT[]),
                            CAST(:part_d AS BIGINT[]), CAST(:part_n AS INTEGER[]), CAST(:part_detail AS TEXT[]))
                     AS m(o, r, s, b, d, n, detail)
                WHERE p.order_id = m.o AND p.rank = m.r AND p.order_id = ANY(CAST(:part_o AS UUID[])))""";

    /** A state (a withdrawal only while still queued: a claim may have taken it since) and a report's acknowledgement. */
    private static final String ORDERS = """
            orders AS (UPDATE transfer_order o
                SET state = CASE WHEN m.s IS NULL OR (m.q AND o.state <> 'QUEUED') THEN o.state ELSE m.s END,
                    acked_at = CASE WHEN m.a THEN COALESCE(o.acked_at, :now) ELSE o.acked_at END
                FROM unnest(CAST(:ord_l AS UUID[]), CAST(:ord_s AS TEXT[]), CAST(:ord_q AS BOOLEAN[]), CAST(:ord_a AS BOOLEAN[]))
                     AS m(l, s, q, a)
                WHERE o.lease_id = m.l AND o.lease_id = ANY(CAST(:ord_l AS UUID[])))""";

    private static final String MOVES = """
            moved AS (UPDATE lease l SET state = m.st, version = m.v, outcome = m.o, reason = m.r,
                    state_changed_at = CASE WHEN m.v <> l.version THEN :now ELSE l.state_changed_at END,
                    committed_blocks = COALESCE(m.c, l.committed_blocks), source_quiesced = m.sq, destination_quiesced = m.dq
                FROM unnest(CAST(:move_id AS UUID[]), CAST(:move_fv AS BIGINT[]), CAST(:move_st AS TEXT[]), CAST(:move_v AS BIGINT[]),
                            CAST(:move_o AS TEXT[]), CAST(:move_r AS TEXT[]), CAST(:move_c AS INTEGER[]),
                            CAST(:move_sq AS BOOLEAN[]), CAST(:move_dq AS BOOLEAN[]), CAST(:move_k AS INTEGER[]))
                     AS m(id, fv, st, v, o, r, c, sq, dq, k)
                WHERE l.lease_id = m.id AND l.version = m.fv AND l.lease_id = ANY(CAST(:move_id AS UUID[]))
                RETURNING l.donor_incarnation_id AS d, l.target_incarnation_id AS t, m.k AS k),
            ended AS (INSERT INTO lease_inflight_end (incarnation_id, side, shard, ended)
                SELECT x.p, x.s, :end_shard, sum(x.k)
                FROM (SELECT d AS p, 'D' AS s, k FROM moved UNION ALL SELECT t, 'T', k FROM moved) AS x
                WHERE x.k <> 0 GROUP BY x.p, x.s ORDER BY x.p, x.s
                ON CONFLICT (incarnation_id, side, shard) DO UPDATE SET ended = lease_inflight_end.ended + EXCLUDED.ended)""";

    private static final String NEW_PINS = """
            new_pins AS (INSERT INTO lease_source_pin (lease_id, rank, bank_id, slot_runs, blocks, state, updated_at)
                SELECT p.l, p.r, p.b, CAST(p.runs AS JSONB), p.n, p.st, :now
                FROM unnest(CAST(:pin_l AS UUID[]), CAST(:pin_r AS INTEGER[]), CAST(:pin_b AS UUID[]), CAST(:pin_runs AS TEXT[]),
                            CAST(:pin_n AS INTEGER[]), CAST(:pin_st AS TEXT[])) AS p(l, r, b, runs, n, st))""";

    private static final String PIN_STATES = """
            pin_states AS (UPDATE lease_source_pin p SET state = m.t, updated_at = :now
                FROM unnest(CAST(:pst_l AS UUID[]), CAST(:pst_r AS INTEGER[]), CAST(:pst_f AS TEXT[]), CAST(:pst_t AS TEXT[]))
                     AS m(l, r, f, t)
                WHERE p.lease_id = m.l AND p.rank = m.r AND p.state = m.f
                  AND p.lease_id = ANY(CAST(:pst_l AS UUID[])))""";

    /** The batch's new destinations, for their rows, their slot runs and the parts of new orders. */
    private static final String NEW_DESTINATIONS = """
            nd AS (SELECT * FROM unnest(CAST(:dst_l AS UUID[]), CAST(:dst_r AS INTEGER[]), CAST(:dst_t AS UUID[]),
                        CAST(:dst_ref AS TEXT[]), CAST(:dst_runs AS TEXT[]), CAST(:dst_n AS INTEGER[]), CAST(:dst_st AS TEXT[]))
                     AS d(l, r, t, ref, runs, n, st))""";

    /** Destination rows and their slot runs; an overlap with a held run fails the statement. */
    private static final String INSERT_DESTINATIONS = """
            new_destinations AS (INSERT INTO lease_destination
                    (lease_id, rank, incarnation_id, region_ref, slot_runs, blocks, state, updated_at)
                SELECT d.l, d.r, d.t, d.ref, CAST(d.runs AS JSONB), d.n, d.st, :now FROM nd d),
            new_runs AS (INSERT INTO destination_slot_run (lease_id, rank, incarnation_id, slots, held)
                SELECT d.l, d.r, d.t, int4range(CAST(x ->> 0 AS INTEGER), CAST(x ->> 0 AS INTEGER) + CAST(x ->> 1 AS INTEGER)),
                    d.st <> 'RELEASED'
                FROM nd d CROSS JOIN LATERAL jsonb_array_elements(CAST(d.runs AS JSONB)) AS x)""";

    /** Every destination rank of a lease; a release frees its slot runs. */
    private static final String DESTINATION_STATES = """
            destination_states AS (UPDATE lease_destination d SET state = m.t, updated_at = :now
                FROM unnest(CAST(:dsts_l AS UUID[]), CAST(:dsts_f AS TEXT[]), CAST(:dsts_t AS TEXT[])) AS m(l, f, t)
                WHERE d.lease_id = m.l AND d.state = m.f AND d.lease_id = ANY(CAST(:dsts_l AS UUID[]))),
            released_runs AS (UPDATE destination_slot_run SET held = FALSE
                WHERE lease_id = ANY(CAST(:dsts_l AS UUID[])) AND held
                  AND lease_id IN (SELECT m.l FROM unnest(CAST(:dsts_l AS UUID[]), CAST(:dsts_t AS TEXT[])) AS m(l, t)
                                   WHERE m.t = 'RELEASED'))""";

    private static final String ACKS = """
            acks AS (UPDATE engine_command c SET acked_at = :now, ok = m.ok, detail = m.d
                FROM unnest(CAST(:ack_id AS UUID[]), CAST(:ack_ok AS BOOLEAN[]), CAST(:ack_d AS TEXT[])) AS m(id, ok, d)
                WHERE c.command_id = m.id AND c.acked_at IS NULL)""";

    /**
     * New commands; one the same decision also closed (a release's UNPIN withdrawn at once for a
     * fenced donor) is written closed, since the acknowledgements' update does not see rows this
     * statement inserts.
     */
    private static final String COMMANDS = """
            commands AS (INSERT INTO engine_command
                    (command_id, incarnation_id, lease_id, type, rank, created_at, visible_at, acked_at, ok, detail)
                SELECT gen_random_uuid(), c.i, c.l, c.t, c.r, :now, '-infinity', CASE WHEN c.ok IS NOT NULL THEN :now END,
                    c.ok, c.d
                FROM unnest(CAST(:cmd_i AS UUID[]), CAST(:cmd_l AS UUID[]), CAST(:cmd_t AS TEXT[]), CAST(:cmd_r AS INTEGER[]),
                            CAST(:cmd_ok AS BOOLEAN[]), CAST(:cmd_d AS TEXT[]))
                     AS c(i, l, t, r, ok, d)
                ON CONFLICT (lease_id, type, rank) DO NOTHING)""";

    /**
     * One order per lease, with one part per rank: the source end on the donor's bank part, the
     * destination end on the target's allocation, with the regions the target's engine registered
     * for the rank (the source's is its bank part's own), which the agent checks the order against.
     * The order goes to the host of the target's first rank, which initiates the transfer (a CUDA IPC
     * import on one host, or an MNNVL read from the donor host's agent); the order queue builds the
     * agent's wire records from these rows.
     */
    private static final String NEW_ORDERS = """
            queued AS (SELECT * FROM unnest(CAST(:ord_new_o AS UUID[]), CAST(:ord_new_l AS UUID[]), CAST(:ord_new_st AS TEXT[]))
                     AS o(order_id, lease_id, st)),
            created AS (INSERT INTO transfer_order (order_id, lease_id, host_id, donor_host_id, state, created_at, deadline)
                SELECT o.order_id, l.lease_id,
                    (SELECT host_id FROM incarnation_rank WHERE incarnation_id = l.target_incarnation_id ORDER BY rank LIMIT 1),
                    (SELECT host_id FROM incarnation_rank WHERE incarnation_id = l.donor_incarnation_id ORDER BY rank LIMIT 1),
                    o.st, :now, l.transfer_deadline
                FROM queued o JOIN lease l ON l.lease_id = o.lease_id WHERE l.lease_id = ANY(CAST(:ord_new_l AS UUID[]))
                RETURNING order_id),
            created_parts AS (INSERT INTO transfer_part (order_id, rank, slot_runs, bytes, state, bytes_per_block,
                    source_host_id, source_gpu_ordinal, source_region_ref,
                    destination_host_id, destination_gpu_ordinal, destination_region_ref,
                    destination_slot_runs, destination_regions)
                SELECT o.order_id, s.rank, l.source_slot_runs, l.fetch_blocks * p.bytes_per_block, 'QUEUED',
                    p.bytes_per_block, s.host_id, s.gpu_ordinal, p.region_ref,
                    t.host_id, t.gpu_ordinal, d.region_ref, d.slot_runs,
                    ARRAY(SELECT r.region_ref FROM destination_region r
                        WHERE r.incarnation_id = l.target_incarnation_id AND r.rank = s.rank ORDER BY r.region_ref)
                FROM queued o JOIN lease l ON l.lease_id = o.lease_id
                JOIN incarnation_rank s ON s.incarnation_id = l.donor_incarnation_id
                JOIN bank_part p ON p.bank_id = l.bank_id AND p.rank = s.rank
                JOIN incarnation_rank t ON t.incarnation_id = l.target_incarnation_id AND t.rank = s.rank
                CROSS JOIN LATERAL (SELECT x.region_ref, x.slot_runs FROM lease_destination x
                      WHERE x.lease_id = l.lease_id AND x.rank = s.rank
                      UNION ALL SELECT n.ref, CAST(n.runs AS JSONB) FROM nd n WHERE n.l = l.lease_id AND n.r = s.rank) d
                WHERE EXISTS (SELECT 1 FROM created c WHERE c.order_id = o.order_id)
                  AND l.lease_id = ANY(CAST(:ord_new_l AS UUID[])))""";

    private final DatabaseClient db;
    private final LeaseMetrics metrics;
    private final TransferCalibration calibration;
    private final JsonMapper json;

    LeaseWriter(DatabaseClient db, LeaseMetrics metrics, TransferCalibration calibration, JsonMapper json) {
        this.db = db;
        this.metrics = metrics;
        this.calibration = calibration;
        this.json = json;
    }

    /** {@code CAST(:name AS TYPE[])}: how a CTE names and types the arrays it is bound with. */
    private static final Pattern ARRAY = Pattern.compile("CAST\\(:(\\w+) AS (\\w+)\\[]\\)");

    /**
     * One kind of change: its CTEs and its rows by key, each row's values in the order the CTEs
     * first name their arrays, bound as one array per column of the type the CTEs cast it to ({@link
     * ArrayLiteral}).
     */
    private record Kind(String sql, Map<Object, Object[]> rows) {

        Kind(String sql) {
            this(sql, new LinkedHashMap<>());
        }

        void put(Object key, Object... row) {
            rows.put(key, row);
        }

        void bindTo(Map<String, Object> bindings) {
            Matcher m = ARRAY.matcher(sql);
            Set<String> named = new HashSet<>();
            for (int c = 0; m.find(); ) {
                if (named.add(m.group(1))) {
                    bindings.put(m.group(1), column(c++, ArrayLiteral.Type.valueOf(m.group(2))));
                }
            }
        }

        private ArrayLiteral.PgArray column(int c, ArrayLiteral.Type type) {
            ArrayLiteral values = new ArrayLiteral(type, rows.size(), 36);
            for (Object[] row : rows.values()) {
                values.addValue(row[c]);
            }
            return values.build();
        }
    }

    /** The batch's changes grouped by kind, in the shape of the statement's CTEs. */
    private static final class Batch {
        final Kind parts = new Kind(PARTS);
        final Kind orders = new Kind(ORDERS);
        final Kind moves = new Kind(MOVES);
        final Kind newPins = new Kind(NEW_PINS);
        final Kind pinStates = new Kind(PIN_STATES);
        final Kind newDestinations = new Kind(NEW_DESTINATIONS);
        final Kind destinationStates = new Kind(DESTINATION_STATES);
        final Kind acks = new Kind(ACKS);
        final Kind commands = new Kind(COMMANDS);
        final Kind newOrders = new Kind(NEW_ORDERS);
        final List<AuditTrail.Row> audits = new ArrayList<>();
        final List<BlockPins.Block> pinned = new ArrayList<>();
        final List<BlockPins.Block> unpinned = new ArrayList<>();

        private static final String HELD = HoldState.HELD.name();

        void add(LeaseRow lease, LeaseChange change) {
            UUID id = lease.leaseId();
            switch (change) {
                case LeaseChange.Row r ->
                    moves.rows().merge(id, move(r.from(), r.to()), (first, last) -> {
                        last[1] = first[1];
                        last[9] = (Integer) first[9] + (Integer) last[9];
                        return last;
                    });
                case LeaseChange.PinAdded p -> {
                    pinned.addAll(lease.blocks(0, p.rank()));
                    newPins.put(
                            id + "/" + p.rank(),
                            id,
                            p.rank(),
                            lease.bankId(),
                            SlotRuns.json(lease.sourceRuns()),
                            lease.fetchBlocks(),
                            HELD);
                }
                case LeaseChange.PinMoved p -> pinMoved(lease, p);
                case LeaseChange.DestinationAdded(var x) -> {
                    String runs = SlotRuns.json(x.runs());
                    int blocks = (int) SlotRuns.total(x.runs());
                    newDestinations.put(
                            id + "/" + x.rank(), id, x.rank(), lease.targetId(), x.regionRef(), runs, blocks, HELD);
                }
                case LeaseChange.DestinationsMoved x -> destinationsMoved(id, x);
                case LeaseChange.CommandClosed c -> closed(c);
                case LeaseChange.CommandIssued c ->
                    commands.put(c.commandId(), c.incarnationId(), id, c.type().name(), c.rank(), null, null);
                case LeaseChange.OrderQueued o -> newOrders.put(id, UUID.randomUUID(), id, OrderState.QUEUED.name());
                case LeaseChange.OrderMoved o -> orderMoved(id, o);
                case LeaseChange.PartReported(var p) -> part(id, p);
            }
        }

        /** A command closed: acknowledged in place, or written closed when this batch issues it. */
        private void closed(LeaseChange.CommandClosed c) {
            boolean ok = c.state() == CommandState.ACKED;
            Object[] issued = commands.rows().get(c.commandId());
            if (issued == null) {
                acks.put(new Object(), c.commandId(), ok, c.detail());
            } else {
                issued[4] = ok;
                issued[5] = c.detail();
            }
        }

        /** A part's last report; a report proves the agent has the order. */
        private void part(UUID leaseId, LeaseReport.Part p) {
            String state = p.state().name();
            Object[] row = {p.orderId(), p.rank(), state, p.bytes(), p.durationUs(), p.nativeStatus(), p.detail()};
            parts.put(p.orderId() + "/" + p.rank(), row);
            order(leaseId)[3] = true;
        }

        /**
         * A lease row's move, with what it does to its parties' leases in flight: 1 when it leaves the
         * in-flight states, −1 when it re-enters them (merged moves add up to first → last).
         */
        private static Object[] move(LeaseRow from, LeaseRow to) {
            return new Object[] {
                to.leaseId(),
                from.version(),
                to.state().name(),
                to.version(),
                to.outcome() == null ? null : to.outcome().name(),
                to.reason(),
                to.committedBlocks(),
                to.sourceQuiesced(),
                to.destinationQuiesced(),
                (from.state().inFlight() ? 1 : 0) - (to.state().inFlight() ? 1 : 0)
            };
        }

        /** Moves the batch's new pin of the rank in memory, or the stored one by statement; a release unpins. */
        private void pinMoved(LeaseRow lease, LeaseChange.PinMoved p) {
            UUID id = lease.leaseId();
            if (p.to() == HoldState.RELEASED) {
                unpinned.addAll(lease.blocks(0, p.rank()));
            }
            Object[] pin = newPins.rows().get(id + "/" + p.rank());
            if (pin != null && pin[5].equals(p.from().name())) {
                pin[5] = p.to().name();
            }
            Object[] row = {id, p.rank(), p.from().name(), p.to().name()};
            pinStates.rows().merge(id + "/" + p.rank(), row, (first, last) ->
                    new Object[] {id, p.rank(), first[2], last[3]});
        }

        private void destinationsMoved(UUID id, LeaseChange.DestinationsMoved x) {
            for (Object[] d : newDestinations.rows().values()) {
                if (d[0].equals(id) && d[6].equals(x.from().name())) {
                    d[6] = x.to().name();
                }
            }
            Object[] row = {id, x.from().name(), x.to().name()};
            destinationStates.rows().merge(id, row, (first, last) -> new Object[] {id, first[1], last[2]});
        }

        /**
         * A new order is inserted at its last state. A stored order's state is set as decided, but a
         * withdrawal of a queued one only while it is still queued; a later state overrides it.
         */
        private void orderMoved(UUID id, LeaseChange.OrderMoved o) {
            Object[] created = newOrders.rows().get(id);
            if (created != null) {
                created[2] = o.to().name();
                return;
            }
            Object[] row = order(id);
            if (!(o.from() == OrderState.QUEUED && o.to() == OrderState.FAILED)) {
                row[1] = o.to().name();
                row[2] = false;
            } else if (row[1] == null) {
                row[1] = OrderState.FAILED.name();
                row[2] = true;
            }
        }

        private Object[] order(UUID leaseId) {
            return orders.rows().computeIfAbsent(leaseId, k -> new Object[] {leaseId, null, false, false});
        }

        /** The CTEs of the kinds that have rows, in one statement answering how many leases it moved. */
        String sql(Map<String, Object> bindings) {
            List<String> ctes = new ArrayList<>();
            for (Kind k : List.of(parts, orders, moves, newPins, pinStates)) {
                include(k, ctes, bindings);
            }
            if (!audits.isEmpty()) {
                ctes.add("audit AS (" + AuditTrail.INSERT_ALL + ")");
                bindings.putAll(AuditTrail.bindings(audits));
            }
            if (!pinned.isEmpty() || !unpinned.isEmpty()) {
                ctes.add("bank_pins AS (" + BlockPins.ADJUST + ")");
                bindings.putAll(BlockPins.bindings(pinned, unpinned));
            }
            if (!newDestinations.rows().isEmpty() || !newOrders.rows().isEmpty()) {
                ctes.add(NEW_DESTINATIONS);
                newDestinations.bindTo(bindings);
            }
            if (!newDestinations.rows().isEmpty()) {
                ctes.add(INSERT_DESTINATIONS);
            }
            for (Kind k : List.of(destinationStates, acks, commands, newOrders)) {
                include(k, ctes, bindings);
            }
            if (ctes.isEmpty()) {
                return null;
            }
            String moved = moves.rows().isEmpty() ? "SELECT CAST(0 AS BIGINT) AS n" : "SELECT count(*) AS n FROM moved";
            return "WITH " + String.join(",\n", ctes) + "\n" + moved;
        }

        private static void include(Kind k, List<String> ctes, Map<String, Object> bindings) {
            if (!k.rows().isEmpty()) {
                ctes.add(k.sql());
                k.bindTo(bindings);
            }
        }
    }

    Mono<Void> write(List<LeaseDecision> decisions, Instant now) {
        Batch batch = new Batch();
        for (LeaseDecision d : decisions) {
            LeaseRow lease = d.after().row();
            d.changes().forEach(c -> batch.add(lease, c));
            d.audits().forEach(a -> batch.audits.add(audit(lease.leaseId(), a)));
        }
        Map<String, Object> bindings = new HashMap<>();
        String sql = batch.sql(bindings);
        if (sql == null) {
            return Mono.empty();
        }
        bindings.put("now", LeaseRow.at(now));
        if (!batch.moves.rows().isEmpty()) {
            bindings.put("end_shard", ThreadLocalRandom.current().nextInt(END_SHARDS));
        }
        long expected = batch.moves.rows().size();
        return db.sql(sql)
                .bindValues(bindings)
                .map((r, m) -> r.get("n", Long.class))
                .one()
                .flatMap(n -> n == expected
                        ? Mono.<Void>empty()
                        : Mono.error(new IllegalStateException("a lease changed under its lock")));
    }

    private AuditTrail.Row audit(UUID leaseId, LeaseDecision.Audit a) {
        return new AuditTrail.Row(
                a.actor(),
                "lease",
                leaseId.toString(),
                a.action(),
                a.from() == null ? null : a.from().name(),
                a.to() == null ? null : a.to().name(),
                a.version(),
                a.reason(),
                json.writeValueAsString(a.detail()));
    }

    /** Counts the written decisions' metric events; call once their transaction committed. */
    void published(List<LeaseDecision> decisions) {
        for (LeaseDecision d : decisions) {
            for (LeaseDecision.Signal s : d.signals()) {
                switch (s) {
                    case LeaseDecision.Signal.Transition t -> metrics.transition(t.move().to);
                    case LeaseDecision.Signal.Stale x -> metrics.stale(x.kind());
                    case LeaseDecision.Signal.Committed c -> metrics.committed(c.blocks());
                    case LeaseDecision.Signal.Delivered x -> {
                        metrics.delivered(x.predictedMs(), x.realisedMs());
                        calibration.sample(x.domainId(), x.transportClass(), x.bytesPerRank(), x.realisedMs());
                    }
                }
            }
        }
    }
}
