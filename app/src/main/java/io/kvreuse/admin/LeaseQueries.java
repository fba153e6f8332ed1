package io.kvreuse.admin;

import static io.kvreuse.store.Sql.orNull;

import io.r2dbc.spi.Readable;
import java.time.Clock;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.List;
import java.util.UUID;
import org.jspecify.annotations.Nullable;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Read-only views of leases and their transfer parts for the dashboard, straight from the tables
 * the lease feature writes.
 */
@Component
class LeaseQueries {

    /** A lease with the stable names and hosts of its donor and target, for listing them by name. */
    private static final String WITH_NAMES = """
            l.*, d.stable_name AS donor_name, d.host_id AS donor_host, t.stable_name AS target_name,
                   t.host_id AS target_host
            FROM lease l
            LEFT JOIN engine_incarnation d ON d.incarnation_id = l.donor_incarnation_id
            LEFT JOIN engine_incarnation t ON t.incarnation_id = l.target_incarnation_id
            """;

    private final DatabaseClient db;
    private final Clock clock;

    LeaseQueries(DatabaseClient db, Clock clock) {
        this.db = db;
        this.clock = clock;
    }

    /** Leases matching every given filter; UNCERTAIN and overdue ones first, then newest first. */
    Flux<LeaseRow> list(@Nullable String state, @Nullable UUID incarnationId, @Nullable UUID bankId, int limit) {
        return db.sql("""
                        SELECT %s WHERE (CAST(:state AS TEXT) IS NULL OR l.state = :state)
                          AND (CAST(:inc AS UUID) IS NULL OR l.donor_incarnation_id = :inc OR l.target_incarnation_id = :inc)
                          AND (CAST(:bank AS UUID) IS NULL OR l.bank_id = :bank)
                        ORDER BY (l.state = 'UNCERTAIN') DESC, l.created_at DESC, l.lease_id
                        LIMIT :limit
                        """.formatted(WITH_NAMES))
                .bind("state", orNull(state, String.class))
                .bind("inc", orNull(incarnationId, UUID.class))
                .bind("bank", orNull(bankId, UUID.class))
                .bind("limit", limit)
                .map(this::toRow)
                .all();
    }

    Mono<LeaseRow> find(UUID leaseId) {
        return db.sql("SELECT " + WITH_NAMES + " WHERE l.lease_id = :id")
                .bind("id", leaseId)
                .map(this::toRow)
                .one();
    }

    /** Per-rank transfer parts of the lease's order, with measured bandwidth. */
    Flux<PartRow> parts(UUID leaseId) {
        return db.sql("""
                        SELECT p.rank, p.state, p.bytes, p.bytes_moved, p.duration_us, p.native_status, p.detail, p.updated_at,
                               o.host_id, o.state AS order_state
                        FROM transfer_order o JOIN transfer_part p ON p.order_id = o.order_id
                        WHERE o.lease_id = :id ORDER BY p.rank
                        """)
                .bind("id", leaseId)
                .map((row, meta) -> new PartRow(
                        row.get("rank", Integer.class),
                        row.get("state", String.class),
                        row.get("bytes", Long.class),
                        row.get("bytes_moved", Long.class),
                        row.get("duration_us", Long.class),
                        row.get("native_status", Integer.class),
                        row.get("detail", String.class),
                        row.get("host_id", String.class),
                        row.get("order_state", String.class)))
                .all();
    }

    /** Source pins and destination allocations per rank: what the lease holds. */
    Flux<HoldRow> holds(UUID leaseId) {
        return db.sql("""
                        SELECT 'source pin' AS kind, rank, blocks, state FROM lease_source_pin WHERE lease_id = :id
                        UNION ALL
                        SELECT 'destination', rank, blocks, state FROM lease_destination WHERE lease_id = :id
                        ORDER BY kind DESC, rank
                        """)
                .bind("id", leaseId)
                .map((row, meta) -> new HoldRow(
                        row.get("kind", String.class),
                        row.get("rank", Integer.class),
                        row.get("blocks", Integer.class),
                        row.get("state", String.class)))
                .all();
    }

    private LeaseRow toRow(Readable r) {
        String state = r.get("state", String.class);
        Instant created = at(r, "created_at");
        Instant transferDeadline = at(r, "transfer_deadline");
        Instant now = clock.instant();
        boolean live = FleetCounts.LIVE_LEASE_STATES.contains(state);
        return new LeaseRow(
                r.get("lease_id", UUID.class),
                r.get("request_id", String.class),
                state,
                r.get("outcome", String.class),
                r.get("donor_incarnation_id", UUID.class),
                r.get("donor_epoch", Long.class),
                r.get("donor_name", String.class),
                r.get("donor_host", String.class),
                r.get("target_incarnation_id", UUID.class),
                r.get("target_epoch", Long.class),
                r.get("target_name", String.class),
                r.get("target_host", String.class),
                r.get("bank_id", UUID.class),
                r.get("bank_epoch", Long.class),
                r.get("domain_id", String.class),
                r.get("transport_class", String.class),
                r.get("local_prefix_blocks", Integer.class),
                r.get("fetch_blocks", Integer.class),
                r.get("predicted_transfer_ms", Double.class),
                r.get("predicted_recompute_ms", Double.class),
                created,
                at(r, "state_changed_at"),
                at(r, "ttl_deadline"),
                transferDeadline,
                at(r, "abandon_deadline"),
                live && now.isAfter(transferDeadline),
                live ? java.time.Duration.between(created, now).toMillis() : null);
    }

    private static Instant at(Readable r, String column) {
        return r.get(column, OffsetDateTime.class).toInstant();
    }

    /** A lease as listed, its engines by name and host; {@code overdue}: still live past its transfer deadline. */
    record LeaseRow(
            UUID leaseId,
            String requestId,
            String state,
            @Nullable String outcome,
            UUID donorIncarnationId,
            long donorEpoch,
            @Nullable String donorName,
            @Nullable String donorHost,
            UUID targetIncarnationId,
            long targetEpoch,
            @Nullable String targetName,
            @Nullable String targetHost,
            UUID bankId,
            long bankEpoch,
            String domainId,
            String transportClass,
            int localPrefixBlocks,
            int fetchBlocks,
            double predictedTransferMs,
            double predictedRecomputeMs,
            Instant createdAt,
            Instant stateChangedAt,
            Instant ttlDeadline,
            Instant transferDeadline,
            Instant abandonDeadline,
            boolean overdue,
            @Nullable Long ageMs) {

        public boolean uncertain() {
            return "UNCERTAIN".equals(state);
        }

        public double predictedGainMs() {
            return predictedRecomputeMs - predictedTransferMs;
        }
    }

    /** One rank's transfer part. */
    record PartRow(
            int rank,
            String state,
            long bytes,
            long bytesMoved,
            @Nullable Long durationUs,
            @Nullable Integer nativeStatus,
            @Nullable String detail,
            String hostId,
            String orderState) {

        /** Measured bandwidth in GB/s, when the part reported a duration. */
        public @Nullable Double gigabytesPerSecond() {
            return durationUs == null || durationUs <= 0 ? null : bytesMoved / (durationUs * 1000.0);
        }
    }

    /** A pin or an allocation the lease holds on one rank. */
    record HoldRow(String kind, int rank, int blocks, String state) {}

    static final List<String> STATES = FleetCounts.LEASE_STATES;
}
