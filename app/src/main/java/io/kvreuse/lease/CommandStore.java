package io.kvreuse.lease;

import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.UUID;
import org.jspecify.annotations.Nullable;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.stereotype.Repository;
import reactor.core.publisher.Flux;

/**
 * SQL of the engine command queue. A command stays until acknowledged; handing it out hides it
 * until {@code visible_at}, so concurrent pollers of one incarnation never get it twice within that
 * window and a poller that died gets it again after.
 */
@Repository
class CommandStore {

    private final DatabaseClient db;

    CommandStore(DatabaseClient db) {
        this.db = db;
    }

    /** A command as stored. */
    record Command(
            UUID commandId,
            UUID incarnationId,
            UUID leaseId,
            String type,
            int rank,
            int deliveries,
            @Nullable Instant ackedAt,
            @Nullable Boolean ok) {}

    /**
     * Hands out up to {@code limit} visible commands, hidden until {@code hiddenUntil}, each with its
     * lease as it is, in one statement. With none to hand out, the one row without a command says
     * when the next unacknowledged command becomes visible (none left: {@link Instant#MAX}; one
     * visible but locked by another poll: null).
     */
    Flux<Claimed> claim(UUID incarnationId, Instant now, Instant hiddenUntil, int limit) {
        return db.sql("""
                        WITH due AS (
                            SELECT command_id FROM engine_command
                            WHERE incarnation_id = :inc AND acked_at IS NULL AND visible_at <= :now
                            ORDER BY created_at, rank LIMIT :limit FOR UPDATE SKIP LOCKED),
                        claimed AS (
                            UPDATE engine_command c SET visible_at = :hidden, deliveries = c.deliveries + 1
                            FROM due WHERE c.command_id = due.command_id
                            RETURNING c.command_id, c.incarnation_id, c.lease_id, c.type, c.rank, c.deliveries,
                                c.acked_at, c.ok, c.created_at AS command_created),
                        pending AS (
                            SELECT count(*) FILTER (WHERE visible_at <= :now) AS visible, min(visible_at) AS next_visible
                            FROM engine_command WHERE incarnation_id = :inc AND acked_at IS NULL)
                        SELECT c.command_id, c.incarnation_id, c.type, c.rank, c.deliveries, c.acked_at, c.ok,
                            o.visible, o.next_visible, """ + LeaseRow.COLUMNS + """

                        FROM pending o LEFT JOIN (claimed c JOIN lease l ON l.lease_id = c.lease_id) ON true
                        ORDER BY c.command_created, c.rank, c.command_id
                        """)
                .bind("inc", incarnationId)
                .bind("now", LeaseStore.at(now))
                .bind("hidden", LeaseStore.at(hiddenUntil))
                .bind("limit", limit)
                .map((r, m) -> r.get("command_id", UUID.class) == null
                        ? new Claimed(null, null, quietUntil(r))
                        : new Claimed(toCommand(r), LeaseRow.of(r), null))
                .all();
    }

    private static @Nullable Instant quietUntil(io.r2dbc.spi.Readable r) {
        OffsetDateTime next = r.get("next_visible", OffsetDateTime.class);
        return r.get("visible", Long.class) > 0 ? null : next == null ? Instant.MAX : next.toInstant();
    }

    /** A claimed command with its lease, or (no command) when the next one becomes visible. */
    record Claimed(
            @Nullable Command command,
            @Nullable LeaseRow lease,
            @Nullable Instant quietUntil) {}

    static Command toCommand(io.r2dbc.spi.Readable r) {
        OffsetDateTime acked = r.get("acked_at", OffsetDateTime.class);
        return new Command(
                r.get("command_id", UUID.class),
                r.get("incarnation_id", UUID.class),
                r.get("lease_id", UUID.class),
                r.get("type", String.class),
                r.get("rank", Integer.class),
                r.get("deliveries", Integer.class),
                acked == null ? null : acked.toInstant(),
                r.get("ok", Boolean.class));
    }
}
