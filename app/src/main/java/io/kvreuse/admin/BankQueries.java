package io.kvreuse.admin;

import static io.kvreuse.store.Sql.orNull;

import io.r2dbc.spi.Readable;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.UUID;
import org.jspecify.annotations.Nullable;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Flux;

/** Banks as listed on the dashboard: with their owner's state, readiness and block counts. */
@Component
class BankQueries {

    private static final String SELECT = """
            SELECT b.bank_id, b.incarnation_id, b.state, b.unpublished_reason, b.bank_epoch, b.capacity_blocks,
                   b.rank_disagreement, b.state_changed_at, i.state AS owner_state, i.host_id, i.stable_name,
                   (SELECT count(*) FROM bank_part p WHERE p.bank_id = b.bank_id) AS parts,
                   (SELECT count(*) FROM bank_part p WHERE p.bank_id = b.bank_id AND p.ready) AS ready_parts,
                   (SELECT count(*) FROM bank_part p WHERE p.bank_id = b.bank_id AND p.needs_snapshot) AS snapshot_parts,
                   (SELECT count(*) FROM bank_block k WHERE k.bank_id = b.bank_id) AS blocks,
                   (SELECT count(*) FROM bank_block k WHERE k.bank_id = b.bank_id AND k.pin_count > 0) AS pinned
            FROM retained_bank b JOIN engine_incarnation i ON i.incarnation_id = b.incarnation_id
            """;

    private final DatabaseClient db;

    BankQueries(DatabaseClient db) {
        this.db = db;
    }

    /** Banks in the given state (all when null) — dropped ones only when asked for. */
    Flux<BankRow> list(@Nullable String state, int limit) {
        return db.sql(SELECT + """
                        WHERE (CAST(:state AS TEXT) IS NULL AND b.state <> 'DROPPED') OR b.state = :state
                        ORDER BY b.state_changed_at DESC, b.bank_id LIMIT :limit
                        """)
                .bind("state", orNull(state, String.class))
                .bind("limit", limit)
                .map(BankQueries::toRow)
                .all();
    }

    Flux<BankRow> ofIncarnation(UUID incarnationId) {
        return db.sql(SELECT + " WHERE b.incarnation_id = :id ORDER BY b.created_at DESC")
                .bind("id", incarnationId)
                .map(BankQueries::toRow)
                .all();
    }

    private static BankRow toRow(Readable r) {
        return new BankRow(
                r.get("bank_id", UUID.class),
                r.get("incarnation_id", UUID.class),
                r.get("stable_name", String.class),
                r.get("host_id", String.class),
                r.get("owner_state", String.class),
                r.get("state", String.class),
                r.get("unpublished_reason", String.class),
                r.get("bank_epoch", Long.class),
                r.get("capacity_blocks", Integer.class),
                Boolean.TRUE.equals(r.get("rank_disagreement", Boolean.class)),
                r.get("parts", Long.class),
                r.get("ready_parts", Long.class),
                r.get("snapshot_parts", Long.class),
                r.get("blocks", Long.class),
                r.get("pinned", Long.class),
                r.get("state_changed_at", OffsetDateTime.class).toInstant());
    }

    /** One bank with its owner and counts; {@code blocks} counts every rank's copy. */
    record BankRow(
            UUID bankId,
            UUID incarnationId,
            @Nullable String stableName,
            String hostId,
            String ownerState,
            String state,
            @Nullable String unpublishedReason,
            long bankEpoch,
            int capacityBlocks,
            boolean rankDisagreement,
            long parts,
            long readyParts,
            long snapshotParts,
            long blocks,
            long pinned,
            Instant stateChangedAt) {

        /** The owner is gone but the bank was not dropped: a cleanup candidate. */
        public boolean ownerGone() {
            return !"DROPPED".equals(state)
                    && java.util.Set.of("SUSPECT", "LOST", "RECLAIM_PENDING", "RECLAIMED", "EXITED")
                            .contains(ownerState);
        }
    }
}
