package io.kvreuse.lease;

import static io.kvreuse.store.Sql.orNull;

import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.UUID;
import org.jspecify.annotations.Nullable;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.stereotype.Repository;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/** Reads of lease rows as they are, for views, lists, command polls and the parties' checks. */
@Repository
class LeaseStore {

    private final DatabaseClient db;

    LeaseStore(DatabaseClient db) {
        this.db = db;
    }

    Mono<LeaseRow> find(UUID id) {
        return db.sql("SELECT " + LeaseRow.COLUMNS + " FROM lease l WHERE l.lease_id = :id")
                .bind("id", id)
                .map((r, m) -> LeaseRow.of(r))
                .one();
    }

    /** Leases by id, as they are. */
    Flux<LeaseRow> find(java.util.Collection<UUID> ids) {
        return db.sql("SELECT " + LeaseRow.COLUMNS + " FROM lease l WHERE l.lease_id = ANY(CAST(:ids AS UUID[]))")
                .bind("ids", ids.stream().map(UUID::toString).toArray(String[]::new))
                .map((r, m) -> LeaseRow.of(r))
                .all();
    }

    /** Leases matching the filter that the given owner subject or agent host may see (null: all), newest first. */
    Flux<LeaseRow> list(
            @Nullable LeaseState state,
            @Nullable UUID incarnationId,
            @Nullable String owner,
            @Nullable String agentOwner,
            @Nullable UUID only,
            int limit) {
        return db.sql("SELECT " + LeaseRow.COLUMNS + """

                        FROM lease l
                        JOIN engine_incarnation d ON d.incarnation_id = l.donor_incarnation_id
                        JOIN engine_incarnation t ON t.incarnation_id = l.target_incarnation_id
                        WHERE (CAST(:state AS TEXT) IS NULL OR l.state = :state)
                          AND (CAST(:only AS UUID) IS NULL OR l.lease_id = :only)
                          AND (CAST(:inc AS UUID) IS NULL OR l.donor_incarnation_id = :inc OR l.target_incarnation_id = :inc)
                          AND (CAST(:owner AS TEXT) IS NULL OR d.owner_subject = :owner OR t.owner_subject = :owner)
                          AND (CAST(:agent AS TEXT) IS NULL OR EXISTS (SELECT 1 FROM node_agent a
                                WHERE a.owner_subject = :agent AND a.host_id IN (d.host_id, t.host_id)))
                        ORDER BY l.created_at DESC, l.lease_id LIMIT :limit
                        """)
                .bind("state", orNull(state == null ? null : state.name(), String.class))
                .bind("inc", orNull(incarnationId, UUID.class))
                .bind("owner", orNull(owner, String.class))
                .bind("agent", orNull(agentOwner, String.class))
                .bind("only", orNull(only, UUID.class))
                .bind("limit", limit)
                .map((r, m) -> LeaseRow.of(r))
                .all();
    }

    /** Leases on either side of an incarnation that are not finished, in id order (the lock order). */
    Flux<UUID> unfinished(UUID incarnationId) {
        return db.sql("""
                        SELECT lease_id FROM lease
                        WHERE (donor_incarnation_id = :i OR target_incarnation_id = :i) AND state NOT IN ('RELEASED', 'EXPIRED')
                        ORDER BY lease_id
                        """)
                .bind("i", incarnationId)
                .map((r, m) -> r.get("lease_id", UUID.class))
                .all();
    }

    /** An incarnation's current fencing state: what reports and leases are checked against. */
    record Party(UUID id, long epoch, String state, String owner, String hostId) {}

    Mono<Party> party(UUID incarnationId) {
        return db.sql("SELECT incarnation_id, fencing_epoch, state, owner_subject, host_id FROM engine_incarnation "
                        + "WHERE incarnation_id = :id")
                .bind("id", incarnationId)
                .map((r, m) -> new Party(
                        r.get("incarnation_id", UUID.class),
                        r.get("fencing_epoch", Long.class),
                        r.get("state", String.class),
                        r.get("owner_subject", String.class),
                        r.get("host_id", String.class)))
                .one();
    }

    static OffsetDateTime at(Instant t) {
        return t.atOffset(ZoneOffset.UTC);
    }
}
