package io.kvreuse.region;

import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.List;
import java.util.UUID;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.stereotype.Repository;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/** SQL of the {@code destination_region} table, which only this feature writes. */
@Repository
class DestinationRegionStore {

    private final DatabaseClient db;

    DestinationRegionStore(DatabaseClient db) {
        this.db = db;
    }

    Flux<DestinationRegionRequests.RegisteredDestinationRegion> of(UUID incarnationId) {
        return db.sql("""
                        SELECT rank, region_ref, capacity_blocks, registered_at FROM destination_region
                        WHERE incarnation_id = :id ORDER BY rank, region_ref
                        """)
                .bind("id", incarnationId)
                .map((r, m) -> new DestinationRegionRequests.RegisteredDestinationRegion(
                        r.get("rank", Integer.class),
                        r.get("region_ref", String.class),
                        r.get("capacity_blocks", Integer.class),
                        r.get("registered_at", OffsetDateTime.class).toInstant()))
                .all();
    }

    /**
     * The first of {@code refs} that another live incarnation of {@code hostId} holds, as a bank part
     * or a destination region: on one host a reference names one piece of memory.
     */
    Mono<String> heldElsewhere(UUID incarnationId, String hostId, List<String> refs) {
        return db.sql("""
                        SELECT ref FROM (
                            SELECT r.region_ref AS ref FROM destination_region r
                            JOIN engine_incarnation i ON i.incarnation_id = r.incarnation_id
                            WHERE r.region_ref = ANY(:refs) AND r.incarnation_id <> :id AND i.host_id = :host
                              AND i.state NOT IN ('EXITED', 'RECLAIMED')
                            UNION ALL
                            SELECT p.region_ref FROM bank_part p
                            JOIN retained_bank b ON b.bank_id = p.bank_id
                            JOIN engine_incarnation i ON i.incarnation_id = b.incarnation_id
                            WHERE p.region_ref = ANY(:refs) AND b.incarnation_id <> :id AND i.host_id = :host
                              AND i.state NOT IN ('EXITED', 'RECLAIMED') AND b.state <> 'DROPPED'
                        ) held ORDER BY ref LIMIT 1
                        """)
                .bind("refs", refs.toArray(String[]::new))
                .bind("id", incarnationId)
                .bind("host", hostId)
                .map((r, m) -> r.get("ref", String.class))
                .one();
    }

    Mono<Long> insert(UUID incarnationId, List<DestinationRegionRequests.DestinationRegion> regions, Instant now) {
        return db.sql("""
                        INSERT INTO destination_region (incarnation_id, rank, region_ref, capacity_blocks, registered_at)
                        SELECT :id, r.rank, r.ref, r.capacity, :now
                        FROM unnest(CAST(:ranks AS INTEGER[]), CAST(:refs AS TEXT[]), CAST(:capacities AS INTEGER[]))
                            AS r(rank, ref, capacity)
                        ON CONFLICT (incarnation_id, rank, region_ref) DO NOTHING
                        """)
                .bind("id", incarnationId)
                .bind(
                        "ranks",
                        regions.stream()
                                .map(DestinationRegionRequests.DestinationRegion::rank)
                                .toArray(Integer[]::new))
                .bind(
                        "refs",
                        regions.stream()
                                .map(DestinationRegionRequests.DestinationRegion::regionRef)
                                .toArray(String[]::new))
                .bind(
                        "capacities",
                        regions.stream()
                                .map(DestinationRegionRequests.DestinationRegion::capacityBlocks)
                                .toArray(Integer[]::new))
                .bind("now", now.atOffset(ZoneOffset.UTC))
                .fetch()
                .rowsUpdated();
    }
}
