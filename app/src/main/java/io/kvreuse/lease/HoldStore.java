package io.kvreuse.lease;

import io.kvreuse.bank.BlockPins;
import io.r2dbc.postgresql.codec.Json;
import java.time.Instant;
import java.util.UUID;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.stereotype.Repository;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * SQL of what a lease holds: source pins (counted on the donor's {@code bank_block} rows by the
 * bank's {@link BlockPins}) and
 * destination allocations (slot runs under an exclusion constraint). Every release is a conditional
 * state change of the pin or allocation row, so it happens exactly once.
 */
@Repository
class HoldStore {

    private final DatabaseClient db;
    private final BlockPins bankPins;

    HoldStore(DatabaseClient db, BlockPins bankPins) {
        this.db = db;
        this.bankPins = bankPins;
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

    /** Pins the fetched blocks on one rank if the bank holds every one at its slot ({@link BlockPins#pinAll}). */
    Mono<Boolean> pinBlocks(UUID bankId, int rank, long[] hashes, int[] slots) {
        return bankPins.pinAll(bankId, rank, hashes, slots);
    }

    /** Drops one pin from each block still in the bank ({@link BlockPins#unpinAll}). */
    Mono<Long> unpinBlocks(UUID bankId, int rank, long[] hashes) {
        return bankPins.unpinAll(bankId, rank, hashes);
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
