package io.kvreuse.lease;

import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.UUID;
import org.jspecify.annotations.Nullable;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.stereotype.Repository;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

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

    /** Queues a command unless the same (lease, type, rank) exists; visible at once. */
    Mono<Void> insert(UUID incarnationId, UUID leaseId, String type, int rank, Instant now) {
        return db.sql("""
                        INSERT INTO engine_command (command_id, incarnation_id, lease_id, type, rank, created_at, visible_at)
                        VALUES (:cmd, :inc, :lease, :type, :rank, :now, '-infinity')
                        ON CONFLICT (lease_id, type, rank) DO NOTHING
                        """)
                .bind("cmd", UUID.randomUUID())
                .bind("inc", incarnationId)
                .bind("lease", leaseId)
                .bind("type", type)
                .bind("rank", rank)
                .bind("now", LeaseStore.at(now))
                .then();
    }

    /** Withdraws unacknowledged commands of a type (e.g. PINs of a lease that no longer wants them). */
    Mono<Long> cancel(UUID leaseId, String type, Instant now) {
        return db.sql("""
                        UPDATE engine_command SET acked_at = :now, ok = FALSE, detail = 'withdrawn'
                        WHERE lease_id = :lease AND type = :type AND acked_at IS NULL
                        """)
                .bind("now", LeaseStore.at(now))
                .bind("lease", leaseId)
                .bind("type", type)
                .fetch()
                .rowsUpdated();
    }

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

    Mono<Command> lock(UUID commandId) {
        return db.sql("SELECT * FROM engine_command WHERE command_id = :id FOR UPDATE")
                .bind("id", commandId)
                .map((r, m) -> toCommand(r))
                .one();
    }

    Mono<Command> find(UUID commandId) {
        return db.sql("SELECT * FROM engine_command WHERE command_id = :id")
                .bind("id", commandId)
                .map((r, m) -> toCommand(r))
                .one();
    }

    /** Records the acknowledgement once; false if it already was. */
    Mono<Boolean> ack(UUID commandId, boolean ok, @Nullable String detail, Instant now) {
        return db.sql("""
                        UPDATE engine_command SET acked_at = :now, ok = :ok, detail = :detail
                        WHERE command_id = :id AND acked_at IS NULL
                        """)
                .bind("now", LeaseStore.at(now))
                .bind("ok", ok)
                .bind("detail", io.kvreuse.store.Sql.orNull(detail, String.class))
                .bind("id", commandId)
                .fetch()
                .rowsUpdated()
                .map(n -> n == 1);
    }

    /** Acknowledges a lease's open commands of a type for it (a commit answers the DELIVERED notice). */
    Mono<Long> settle(UUID leaseId, String type, String detail, Instant now) {
        return db.sql("""
                        UPDATE engine_command SET acked_at = :now, ok = TRUE, detail = :detail
                        WHERE lease_id = :lease AND type = :type AND acked_at IS NULL
                        """)
                .bind("now", LeaseStore.at(now))
                .bind("detail", detail)
                .bind("lease", leaseId)
                .bind("type", type)
                .fetch()
                .rowsUpdated();
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
