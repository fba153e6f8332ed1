package io.kvreuse.lease;

import io.r2dbc.postgresql.codec.Json;
import java.time.Instant;
import java.util.UUID;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.stereotype.Repository;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * SQL of what a lease holds: source pins (counted on the donor's {@code bank_block} rows) and
 * destination allocations (slot runs under an exclusion constraint). Every release is a conditional
 * state change of the pin or allocation row, so it happens exactly once.
 */
@Repository
class HoldStore {

    private final DatabaseClient db;

    HoldStore(DatabaseClient db) {
        this.db = db;
    }

    /** One rank's source pin. */
    record Pin(int rank, String state, int blocks) {}

    /** One rank's destination allocation. */
    record Destination(int rank, String regionRef, int[][] runs, String state) {}

    Flux<Pin> pins(UUID leaseId) {
        return db.sql("SELECT rank, state, blocks FROM lease_source_pin WHERE lease_id = :id ORDER BY rank")
                .bind("id", leaseId)
                .map((r, m) -> new Pin(
                        r.get("rank", Integer.class), r.get("state", String.class), r.get("blocks", Integer.class)))
                .all();
    }

    Flux<Destination> destinations(UUID leaseId) {
        return db.sql(
                        "SELECT rank, region_ref, slot_runs, state FROM lease_destination WHERE lease_id = :id ORDER BY rank")
                .bind("id", leaseId)
                .map((r, m) -> new Destination(
                        r.get("rank", Integer.class),
                        r.get("region_ref", String.class),
                        SlotRuns.parse(r.get("slot_runs", Json.class).asString()),
                        r.get("state", String.class)))
                .all();
    }

    /**
     * Pins the fetched blocks on one rank if, and only if, the bank holds every one of them at the
     * expected slot: the matching rows are locked, counted, and only then incremented.
     */
    Mono<Boolean> pinBlocks(UUID bankId, int rank, long[] hashes, int[] slots) {
        Long[] h = box(hashes);
        Integer[] s = box(slots);
        return db.sql("""
                        SELECT count(*) AS n FROM (
                            SELECT 1 FROM bank_block b
                            JOIN unnest(CAST(:h AS BIGINT[]), CAST(:s AS INTEGER[])) AS t(h, s) ON b.seq_hash = t.h AND b.slot = t.s
                            WHERE b.bank_id = :bank AND b.rank = :rank
                            FOR UPDATE OF b) AS hit
                        """)
                .bind("h", h)
                .bind("s", s)
                .bind("bank", bankId)
                .bind("rank", rank)
                .map((r, m) -> r.get("n", Long.class))
                .one()
                .flatMap(n -> n != hashes.length
                        ? Mono.just(false)
                        : db.sql("""
                                        UPDATE bank_block b SET pin_count = b.pin_count + 1
                                        FROM unnest(CAST(:h AS BIGINT[]), CAST(:s AS INTEGER[])) AS t(h, s)
                                        WHERE b.bank_id = :bank AND b.rank = :rank AND b.seq_hash = t.h AND b.slot = t.s
                                        """)
                                .bind("h", h)
                                .bind("s", s)
                                .bind("bank", bankId)
                                .bind("rank", rank)
                                .fetch()
                                .rowsUpdated()
                                .map(u -> u == hashes.length));
    }

    /** Drops one pin from each block still in the bank (a reset may have removed them since). */
    Mono<Long> unpinBlocks(UUID bankId, int rank, long[] hashes) {
        return db.sql("""
                        UPDATE bank_block SET pin_count = pin_count - 1
                        WHERE bank_id = :bank AND rank = :rank AND seq_hash = ANY(:h) AND pin_count > 0
                        """)
                .bind("bank", bankId)
                .bind("rank", rank)
                .bind("h", box(hashes))
                .fetch()
                .rowsUpdated();
    }

    Mono<Void> insertPin(UUID leaseId, int rank, UUID bankId, int[][] runs, int blocks, String state, Instant now) {
        return db.sql("""
                        INSERT INTO lease_source_pin (lease_id, rank, bank_id, slot_runs, blocks, state, updated_at)
                        VALUES (:id, :rank, :bank, :runs, :blocks, :state, :now)
                        """)
                .bind("id", leaseId)
                .bind("rank", rank)
                .bind("bank", bankId)
                .bind("runs", Json.of(SlotRuns.json(runs)))
                .bind("blocks", blocks)
                .bind("state", state)
                .bind("now", LeaseStore.at(now))
                .then();
    }

    /** Moves one rank's pin (every rank when {@code rank < 0}) from one state to another; how many moved. */
    Mono<Long> pinState(UUID leaseId, int rank, String from, String to, Instant now) {
        return db.sql("""
                        UPDATE lease_source_pin SET state = :to, updated_at = :now
                        WHERE lease_id = :id AND (:rank < 0 OR rank = :rank) AND state = :from
                        """)
                .bind("to", to)
                .bind("now", LeaseStore.at(now))
                .bind("id", leaseId)
                .bind("rank", rank)
                .bind("from", from)
                .fetch()
                .rowsUpdated();
    }

    Mono<Void> insertDestination(UUID leaseId, int rank, UUID target, String regionRef, int[][] runs, Instant now) {
        Mono<Void> row = db.sql("""
                        INSERT INTO lease_destination (lease_id, rank, incarnation_id, region_ref, slot_runs, blocks, state, updated_at)
                        VALUES (:id, :rank, :target, :ref, :runs, :blocks, 'HELD', :now)
                        """)
                .bind("id", leaseId)
                .bind("rank", rank)
                .bind("target", target)
                .bind("ref", regionRef)
                .bind("runs", Json.of(SlotRuns.json(runs)))
                .bind("blocks", (int) SlotRuns.total(runs))
                .bind("now", LeaseStore.at(now))
                .then();
        return row.then(Flux.fromArray(runs)
                .concatMap(run -> db.sql("""
                                INSERT INTO destination_slot_run (lease_id, rank, incarnation_id, slots)
                                VALUES (:id, :rank, :target, int4range(:start, :end))
                                """)
                        .bind("id", leaseId)
                        .bind("rank", rank)
                        .bind("target", target)
                        .bind("start", run[0])
                        .bind("end", run[0] + run[1])
                        .then())
                .then());
    }

    /** Moves every destination rank from one state to another; a release also frees the slot ranges. */
    Mono<Long> destinationState(UUID leaseId, String from, String to, Instant now) {
        Mono<Long> moved = db.sql("""
                        UPDATE lease_destination SET state = :to, updated_at = :now WHERE lease_id = :id AND state = :from
                        """)
                .bind("to", to)
                .bind("now", LeaseStore.at(now))
                .bind("id", leaseId)
                .bind("from", from)
                .fetch()
                .rowsUpdated();
        if (!"RELEASED".equals(to)) {
            return moved;
        }
        return moved.flatMap(n -> db.sql("UPDATE destination_slot_run SET held = FALSE WHERE lease_id = :id AND held")
                .bind("id", leaseId)
                .then()
                .thenReturn(n));
    }

    static Long[] box(long[] a) {
        Long[] b = new Long[a.length];
        for (int i = 0; i < a.length; i++) {
            b[i] = a[i];
        }
        return b;
    }

    static Integer[] box(int[] a) {
        Integer[] b = new Integer[a.length];
        for (int i = 0; i < a.length; i++) {
            b[i] = a[i];
        }
        return b;
    }
}
