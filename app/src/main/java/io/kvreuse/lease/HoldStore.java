package io.kvreuse.lease;

import io.r2dbc.postgresql.codec.Json;
import java.util.UUID;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.stereotype.Repository;
import reactor.core.publisher.Flux;

/** Reads of what one lease holds, for its view: source pins and destination allocations. */
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
}
