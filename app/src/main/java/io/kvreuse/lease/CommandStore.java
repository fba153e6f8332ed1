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

    /** Hands out up to {@code limit} visible commands and hides them until {@code hiddenUntil}. */
    Flux<Command> claim(UUID incarnationId, Instant now, Instant hiddenUntil, int limit) {
        return db.sql("""
                        WITH due AS (
                            SELECT command_id FROM engine_command
                            WHERE incarnation_id = :inc AND acked_at IS NULL AND visible_at <= :now
                            ORDER BY created_at, rank LIMIT :limit FOR UPDATE SKIP LOCKED)
                        UPDATE engine_command c SET visible_at = :hidden, deliveries = c.deliveries + 1
                        FROM due WHERE c.command_id = due.command_id
                        RETURNING c.*
                        """)
                .bind("inc", incarnationId)
                .bind("now", LeaseStore.at(now))
                .bind("hidden", LeaseStore.at(hiddenUntil))
                .bind("limit", limit)
                .map((r, m) -> toCommand(r))
                .all();
    }

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
