package io.kvreuse.lease;

import io.kvreuse.audit.AuditTrail;
import io.kvreuse.bank.BlockPins;
import io.r2dbc.postgresql.codec.Json;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.jspecify.annotations.Nullable;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.stereotype.Repository;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Set-based SQL for batches of lease reports: one statement reads or changes the rows of every
 * lease in the batch, with the per-row values passed as arrays ({@code unnest}). Leases are locked
 * in id order, the same order every multi-lease change uses.
 */
@Repository
class BatchStore {

    private final DatabaseClient db;
    private final BlockPins bankPins;
    private final AuditTrail trail;

    BatchStore(DatabaseClient db, BlockPins bankPins, AuditTrail trail) {
        this.db = db;
        this.bankPins = bankPins;
        this.trail = trail;
    }

    static String[] ids(Collection<UUID> ids) {
        return ids.stream().map(UUID::toString).toArray(String[]::new);
    }

    /** The leases, locked for the rest of the transaction, in lease id order. */
    Flux<LeaseRow> lock(Collection<UUID> leaseIds) {
        return db.sql("SELECT " + LeaseRow.COLUMNS
                        + " FROM lease l WHERE l.lease_id = ANY(CAST(:ids AS UUID[])) ORDER BY l.lease_id FOR UPDATE")
                .bind("ids", ids(leaseIds))
                .map((r, m) -> LeaseRow.of(r))
                .all();
    }

    record LeasePin(UUID leaseId, HoldStore.Pin pin) {}

    Flux<LeasePin> pins(Collection<UUID> leaseIds) {
        return db.sql(
                        "SELECT lease_id, rank, state, blocks FROM lease_source_pin WHERE lease_id = ANY(CAST(:ids AS UUID[]))"
                                + " ORDER BY lease_id, rank")
                .bind("ids", ids(leaseIds))
                .map((r, m) -> new LeasePin(
                        r.get("lease_id", UUID.class),
                        new HoldStore.Pin(
                                r.get("rank", Integer.class),
                                r.get("state", String.class),
                                r.get("blocks", Integer.class))))
                .all();
    }

    record LeaseDestination(UUID leaseId, HoldStore.Destination destination) {}

    Flux<LeaseDestination> destinations(Collection<UUID> leaseIds) {
        return db.sql("SELECT lease_id, rank, region_ref, slot_runs, state FROM lease_destination"
                        + " WHERE lease_id = ANY(CAST(:ids AS UUID[])) ORDER BY lease_id, rank")
                .bind("ids", ids(leaseIds))
                .map((r, m) -> new LeaseDestination(
                        r.get("lease_id", UUID.class),
                        new HoldStore.Destination(
                                r.get("rank", Integer.class),
                                r.get("region_ref", String.class),
                                SlotRuns.parse(r.get("slot_runs", Json.class).asString()),
                                r.get("state", String.class))))
                .all();
    }

    /** Current fencing epochs of incarnations. */
    Mono<Map<UUID, Long>> epochs(Collection<UUID> incarnationIds) {
        return db.sql("SELECT incarnation_id, fencing_epoch FROM engine_incarnation"
                        + " WHERE incarnation_id = ANY(CAST(:ids AS UUID[]))")
                .bind("ids", ids(incarnationIds))
                .map((r, m) -> Map.entry(r.get("incarnation_id", UUID.class), r.get("fencing_epoch", Long.class)))
                .all()
                .collectMap(Map.Entry::getKey, Map.Entry::getValue);
    }

    /** Banks' current epochs and states, share-locked (in id order) so a reset waits for this batch. */
    Mono<Map<UUID, LeaseStore.BankNow>> banksForPin(Collection<UUID> bankIds) {
        return db.sql("SELECT bank_id, bank_epoch, state FROM retained_bank WHERE bank_id = ANY(CAST(:ids AS UUID[]))"
                        + " ORDER BY bank_id FOR SHARE")
                .bind("ids", ids(bankIds))
                .map((r, m) -> Map.entry(
                        r.get("bank_id", UUID.class),
                        new LeaseStore.BankNow(r.get("bank_epoch", Long.class), r.get("state", String.class))))
                .all()
                .collectMap(Map.Entry::getKey, Map.Entry::getValue);
    }

    /** One wanted block of a pin: item number, bank, rank, hash and the slot it must be at. */
    record WantedBlock(int item, UUID bank, int rank, long hash, int slot) {}

    /** Locks the matching bank blocks and counts the matches per item ({@link BlockPins#lock}). */
    Mono<Map<Integer, Long>> lockBlocks(List<WantedBlock> wanted) {
        return bankPins.lock(bankBlocks(wanted));
    }

    /** Adds one pin per listed block ({@link BlockPins#pin}). */
    Mono<Long> pinBlocks(List<WantedBlock> blocks) {
        return bankPins.pin(bankBlocks(blocks));
    }

    /** Drops one pin per listed block still in its bank ({@link BlockPins#unpin}). */
    Mono<Long> unpinBlocks(List<WantedBlock> blocks) {
        return bankPins.unpin(bankBlocks(blocks));
    }

    private static List<BlockPins.Block> bankBlocks(List<WantedBlock> blocks) {
        return blocks.stream()
                .map(w -> new BlockPins.Block(w.item(), w.bank(), w.rank(), w.hash(), w.slot()))
                .toList();
    }

    /** A lease's final row after the batch's moves, written if it is still at the version read. */
    record Moved(UUID leaseId, long fromVersion, LeaseRow row) {}

    Mono<Long> move(List<Moved> moves, Instant now) {
        if (moves.isEmpty()) {
            return Mono.just(0L);
        }
        return db.sql("""
                        UPDATE lease l SET state = m.st, version = m.v, outcome = m.outcome, reason = m.reason,
                            state_changed_at = CASE WHEN m.v <> l.version THEN :now ELSE l.state_changed_at END,
                            committed_blocks = COALESCE(m.committed, l.committed_blocks),
                            source_quiesced = m.sq, destination_quiesced = m.dq
                        FROM unnest(CAST(:id AS UUID[]), CAST(:fv AS BIGINT[]), CAST(:st AS TEXT[]), CAST(:v AS BIGINT[]),
                                    CAST(:o AS TEXT[]), CAST(:r AS TEXT[]), CAST(:c AS INTEGER[]), CAST(:sq AS BOOLEAN[]),
                                    CAST(:dq AS BOOLEAN[]))
                             AS m(id, fv, st, v, outcome, reason, committed, sq, dq)
                        WHERE l.lease_id = m.id AND l.version = m.fv AND l.lease_id = ANY(CAST(:id AS UUID[]))
                        """)
                .bind("now", LeaseStore.at(now))
                .bind("id", moves.stream().map(m -> m.leaseId().toString()).toArray(String[]::new))
                .bind("fv", moves.stream().map(Moved::fromVersion).toArray(Long[]::new))
                .bind("st", moves.stream().map(m -> m.row().state().name()).toArray(String[]::new))
                .bind("v", moves.stream().map(m -> m.row().version()).toArray(Long[]::new))
                .bind("o", moves.stream().map(m -> m.row().outcome()).toArray(String[]::new))
                .bind("r", moves.stream().map(m -> m.row().reason()).toArray(String[]::new))
                .bind("c", moves.stream().map(m -> m.row().committedBlocks()).toArray(Integer[]::new))
                .bind("sq", moves.stream().map(m -> m.row().sourceQuiesced()).toArray(Boolean[]::new))
                .bind(
                        "dq",
                        moves.stream().map(m -> m.row().destinationQuiesced()).toArray(Boolean[]::new))
                .fetch()
                .rowsUpdated();
    }

    /** One lease audit row. */
    record Audit(
            String actor,
            UUID leaseId,
            String action,
            @Nullable String from,
            @Nullable String to,
            @Nullable Long epoch,
            @Nullable String reason,
            String detailJson) {}

    /** The rows in one statement, in order ({@link AuditTrail#recordAll}). */
    Mono<Void> audit(List<Audit> rows) {
        return trail.recordAll(rows.stream()
                .map(a -> new AuditTrail.Row(
                        a.actor(),
                        "lease",
                        a.leaseId().toString(),
                        a.action(),
                        a.from(),
                        a.to(),
                        a.epoch(),
                        a.reason(),
                        a.detailJson()))
                .toList());
    }

    record NewPin(UUID leaseId, int rank, UUID bankId, String runsJson, int blocks) {}

    Mono<Void> insertPins(List<NewPin> pins, Instant now) {
        if (pins.isEmpty()) {
            return Mono.empty();
        }
        return db.sql("""
                        INSERT INTO lease_source_pin (lease_id, rank, bank_id, slot_runs, blocks, state, updated_at)
                        SELECT p.l, p.r, p.b, CAST(p.runs AS JSONB), p.n, 'HELD', :now
                        FROM unnest(CAST(:l AS UUID[]), CAST(:r AS INTEGER[]), CAST(:b AS UUID[]), CAST(:runs AS TEXT[]),
                                    CAST(:n AS INTEGER[])) AS p(l, r, b, runs, n)
                        """)
                .bind("now", LeaseStore.at(now))
                .bind("l", pins.stream().map(p -> p.leaseId().toString()).toArray(String[]::new))
                .bind("r", pins.stream().map(NewPin::rank).toArray(Integer[]::new))
                .bind("b", pins.stream().map(p -> p.bankId().toString()).toArray(String[]::new))
                .bind("runs", pins.stream().map(NewPin::runsJson).toArray(String[]::new))
                .bind("n", pins.stream().map(NewPin::blocks).toArray(Integer[]::new))
                .then();
    }

    /** A state change of one rank's pin, or of every rank's when {@code rank < 0}. */
    record PinChange(UUID leaseId, int rank, String from, String to) {}

    Mono<Long> pinStates(List<PinChange> changes, Instant now) {
        if (changes.isEmpty()) {
            return Mono.just(0L);
        }
        return db.sql("""
                        UPDATE lease_source_pin p SET state = m.t, updated_at = :now
                        FROM unnest(CAST(:l AS UUID[]), CAST(:r AS INTEGER[]), CAST(:f AS TEXT[]), CAST(:t AS TEXT[])) AS m(l, r, f, t)
                        WHERE p.lease_id = m.l AND (m.r < 0 OR p.rank = m.r) AND p.state = m.f AND p.lease_id = ANY(CAST(:l AS UUID[]))
                        """)
                .bind("now", LeaseStore.at(now))
                .bind("l", changes.stream().map(c -> c.leaseId().toString()).toArray(String[]::new))
                .bind("r", changes.stream().map(PinChange::rank).toArray(Integer[]::new))
                .bind("f", changes.stream().map(PinChange::from).toArray(String[]::new))
                .bind("t", changes.stream().map(PinChange::to).toArray(String[]::new))
                .fetch()
                .rowsUpdated();
    }

    record NewDestination(UUID leaseId, int rank, UUID target, String regionRef, int[][] runs) {}

    /** Destination rows and their slot runs; an overlap with a held run fails the statement. */
    Mono<Void> insertDestinations(List<NewDestination> dests, Instant now) {
        if (dests.isEmpty()) {
            return Mono.empty();
        }
        List<String> runLease = new java.util.ArrayList<>();
        List<Integer> runRank = new java.util.ArrayList<>();
        List<String> runTarget = new java.util.ArrayList<>();
        List<Integer> runStart = new java.util.ArrayList<>();
        List<Integer> runEnd = new java.util.ArrayList<>();
        for (NewDestination d : dests) {
            for (int[] run : d.runs()) {
                runLease.add(d.leaseId().toString());
                runRank.add(d.rank());
                runTarget.add(d.target().toString());
                runStart.add(run[0]);
                runEnd.add(run[0] + run[1]);
            }
        }
        Mono<Void> rows = db.sql("""
                        INSERT INTO lease_destination (lease_id, rank, incarnation_id, region_ref, slot_runs, blocks, state, updated_at)
                        SELECT d.l, d.r, d.t, d.ref, CAST(d.runs AS JSONB), d.n, 'HELD', :now
                        FROM unnest(CAST(:l AS UUID[]), CAST(:r AS INTEGER[]), CAST(:t AS UUID[]), CAST(:ref AS TEXT[]),
                                    CAST(:runs AS TEXT[]), CAST(:n AS INTEGER[])) AS d(l, r, t, ref, runs, n)
                        """)
                .bind("now", LeaseStore.at(now))
                .bind("l", dests.stream().map(d -> d.leaseId().toString()).toArray(String[]::new))
                .bind("r", dests.stream().map(NewDestination::rank).toArray(Integer[]::new))
                .bind("t", dests.stream().map(d -> d.target().toString()).toArray(String[]::new))
                .bind("ref", dests.stream().map(NewDestination::regionRef).toArray(String[]::new))
                .bind("runs", dests.stream().map(d -> SlotRuns.json(d.runs())).toArray(String[]::new))
                .bind(
                        "n",
                        dests.stream().map(d -> (int) SlotRuns.total(d.runs())).toArray(Integer[]::new))
                .then();
        Mono<Void> runs = db.sql("""
                        INSERT INTO destination_slot_run (lease_id, rank, incarnation_id, slots)
                        SELECT s.l, s.r, s.t, int4range(s.a, s.b)
                        FROM unnest(CAST(:l AS UUID[]), CAST(:r AS INTEGER[]), CAST(:t AS UUID[]), CAST(:a AS INTEGER[]),
                                    CAST(:b AS INTEGER[])) AS s(l, r, t, a, b)
                        """)
                .bind("l", runLease.toArray(String[]::new))
                .bind("r", runRank.toArray(Integer[]::new))
                .bind("t", runTarget.toArray(String[]::new))
                .bind("a", runStart.toArray(Integer[]::new))
                .bind("b", runEnd.toArray(Integer[]::new))
                .then();
        return rows.then(runs);
    }

    /** A state change of every destination rank of a lease. */
    record DestinationChange(UUID leaseId, String from, String to) {}

    Mono<Void> destinationStates(List<DestinationChange> changes, Instant now) {
        if (changes.isEmpty()) {
            return Mono.empty();
        }
        String[] released = changes.stream()
                .filter(c -> c.to().equals("RELEASED"))
                .map(c -> c.leaseId().toString())
                .toArray(String[]::new);
        Mono<Void> moved = db.sql("""
                        UPDATE lease_destination d SET state = m.t, updated_at = :now
                        FROM unnest(CAST(:l AS UUID[]), CAST(:f AS TEXT[]), CAST(:t AS TEXT[])) AS m(l, f, t)
                        WHERE d.lease_id = m.l AND d.state = m.f AND d.lease_id = ANY(CAST(:l AS UUID[]))
                        """)
                .bind("now", LeaseStore.at(now))
                .bind("l", changes.stream().map(c -> c.leaseId().toString()).toArray(String[]::new))
                .bind("f", changes.stream().map(DestinationChange::from).toArray(String[]::new))
                .bind("t", changes.stream().map(DestinationChange::to).toArray(String[]::new))
                .then();
        if (released.length == 0) {
            return moved;
        }
        return moved.then(
                db.sql("UPDATE destination_slot_run SET held = FALSE WHERE lease_id = ANY(CAST(:l AS UUID[])) AND held")
                        .bind("l", released)
                        .then());
    }

    /** An acknowledgement of one command. */
    record CommandAck(UUID commandId, boolean ok, @Nullable String detail) {}

    Mono<Void> ackCommands(List<CommandAck> acks, Instant now) {
        if (acks.isEmpty()) {
            return Mono.empty();
        }
        return db.sql("""
                        UPDATE engine_command c SET acked_at = :now, ok = m.ok, detail = m.d
                        FROM unnest(CAST(:id AS UUID[]), CAST(:ok AS BOOLEAN[]), CAST(:d AS TEXT[])) AS m(id, ok, d)
                        WHERE c.command_id = m.id AND c.acked_at IS NULL AND c.command_id = ANY(CAST(:id AS UUID[]))
                        """)
                .bind("now", LeaseStore.at(now))
                .bind("id", acks.stream().map(a -> a.commandId().toString()).toArray(String[]::new))
                .bind("ok", acks.stream().map(CommandAck::ok).toArray(Boolean[]::new))
                .bind("d", acks.stream().map(CommandAck::detail).toArray(String[]::new))
                .then();
    }

    record NewCommand(UUID incarnationId, UUID leaseId, String type, int rank) {}

    Mono<Void> insertCommands(List<NewCommand> commands, Instant now) {
        if (commands.isEmpty()) {
            return Mono.empty();
        }
        return db.sql("""
                        INSERT INTO engine_command (command_id, incarnation_id, lease_id, type, rank, created_at, visible_at)
                        SELECT gen_random_uuid(), c.i, c.l, c.t, c.r, :now, '-infinity'
                        FROM unnest(CAST(:i AS UUID[]), CAST(:l AS UUID[]), CAST(:t AS TEXT[]), CAST(:r AS INTEGER[])) AS c(i, l, t, r)
                        ON CONFLICT (lease_id, type, rank) DO NOTHING
                        """)
                .bind("now", LeaseStore.at(now))
                .bind(
                        "i",
                        commands.stream().map(c -> c.incarnationId().toString()).toArray(String[]::new))
                .bind("l", commands.stream().map(c -> c.leaseId().toString()).toArray(String[]::new))
                .bind("t", commands.stream().map(NewCommand::type).toArray(String[]::new))
                .bind("r", commands.stream().map(NewCommand::rank).toArray(Integer[]::new))
                .then();
    }

    /** Withdraws the leases' orders that were never handed out. */
    Mono<Void> cancelOrders(Collection<UUID> leaseIds) {
        if (leaseIds.isEmpty()) {
            return Mono.empty();
        }
        return db.sql(
                        "UPDATE transfer_order SET state = 'FAILED' WHERE lease_id = ANY(CAST(:l AS UUID[])) AND state = 'QUEUED'")
                .bind("l", ids(leaseIds))
                .then();
    }

    /** Sets the leases' orders to a state each. */
    Mono<Void> orderStates(Map<UUID, String> states) {
        if (states.isEmpty()) {
            return Mono.empty();
        }
        return db.sql("""
                        UPDATE transfer_order o SET state = m.s
                        FROM unnest(CAST(:l AS UUID[]), CAST(:s AS TEXT[])) AS m(l, s)
                        WHERE o.lease_id = m.l AND o.lease_id = ANY(CAST(:l AS UUID[]))
                        """)
                .bind("l", ids(states.keySet()))
                .bind("s", states.values().toArray(String[]::new))
                .then();
    }

    /** A part's reported progress. */
    record PartUpdate(
            UUID orderId,
            int rank,
            String state,
            long bytes,
            long durationUs,
            @Nullable Integer nativeStatus,
            @Nullable String detail) {}

    /** Records part reports and marks their orders acknowledged (a report proves the agent has the order). */
    Mono<Void> updateParts(List<PartUpdate> parts, Instant now) {
        if (parts.isEmpty()) {
            return Mono.empty();
        }
        Mono<Void> rows = db.sql("""
                        UPDATE transfer_part p SET state = m.s, bytes_moved = m.b, duration_us = m.d, native_status = m.n,
                            detail = m.detail, updated_at = :now
                        FROM unnest(CAST(:o AS UUID[]), CAST(:r AS INTEGER[]), CAST(:s AS TEXT[]), CAST(:b AS BIGINT[]),
                                    CAST(:d AS BIGINT[]), CAST(:n AS INTEGER[]), CAST(:detail AS TEXT[])) AS m(o, r, s, b, d, n, detail)
                        WHERE p.order_id = m.o AND p.rank = m.r AND p.order_id = ANY(CAST(:o AS UUID[]))
                        """)
                .bind("now", LeaseStore.at(now))
                .bind("o", parts.stream().map(p -> p.orderId().toString()).toArray(String[]::new))
                .bind("r", parts.stream().map(PartUpdate::rank).toArray(Integer[]::new))
                .bind("s", parts.stream().map(PartUpdate::state).toArray(String[]::new))
                .bind("b", parts.stream().map(PartUpdate::bytes).toArray(Long[]::new))
                .bind("d", parts.stream().map(PartUpdate::durationUs).toArray(Long[]::new))
                .bind("n", parts.stream().map(PartUpdate::nativeStatus).toArray(Integer[]::new))
                .bind("detail", parts.stream().map(PartUpdate::detail).toArray(String[]::new))
                .then();
        Mono<Void> orders = db.sql("""
                        UPDATE transfer_order SET acked_at = COALESCE(acked_at, :now) WHERE order_id = ANY(CAST(:o AS UUID[]))
                        """)
                .bind("now", LeaseStore.at(now))
                .bind(
                        "o",
                        parts.stream()
                                .map(p -> p.orderId().toString())
                                .distinct()
                                .toArray(String[]::new))
                .then();
        return rows.then(orders);
    }
}
