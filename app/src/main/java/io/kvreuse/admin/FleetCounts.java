package io.kvreuse.admin;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;

/**
 * Counts by state for the overview, and what needs an operator's attention. Live states are counted
 * exactly; finished leases and orders only over the last hour, so the page stays cheap however
 * long the history grows.
 */
@Component
class FleetCounts {

    static final Duration RECENT = Duration.ofHours(1);
    static final List<String> INCARNATION_STATES =
            List.of("REGISTERED", "READY", "DRAINING", "SUSPECT", "LOST", "RECLAIM_PENDING", "EXITED", "RECLAIMED");
    static final List<String> BANK_STATES = List.of("PENDING", "PUBLISHED", "UNPUBLISHED", "DROPPED");
    static final List<String> LEASE_STATES = List.of(
            "PROPOSED",
            "SOURCE_PINNED",
            "TRANSFERRING",
            "DELIVERED",
            "UNCERTAIN",
            "RELEASING",
            "COMMITTED",
            "RELEASED",
            "REFUSED",
            "EXPIRED",
            "FAILED");
    static final List<String> LIVE_LEASE_STATES =
            List.of("PROPOSED", "SOURCE_PINNED", "TRANSFERRING", "DELIVERED", "UNCERTAIN", "RELEASING");
    static final List<String> ORDER_STATES = List.of("QUEUED", "CLAIMED", "UNCERTAIN", "DONE", "FAILED", "QUIESCED");
    private static final List<String> LIVE_ORDER_STATES = List.of("QUEUED", "CLAIMED", "UNCERTAIN");

    private final DatabaseClient db;
    private final Clock clock;

    FleetCounts(DatabaseClient db, Clock clock) {
        this.db = db;
        this.clock = clock;
    }

    Mono<Snapshot> snapshot() {
        Instant since = clock.instant().minus(RECENT);
        return Mono.zip(
                        byState(
                                "SELECT state, count(*) AS n FROM engine_incarnation GROUP BY state",
                                INCARNATION_STATES),
                        byState("SELECT state, count(*) AS n FROM retained_bank GROUP BY state", BANK_STATES),
                        byState(recentOrLive("lease", LIVE_LEASE_STATES), since, LEASE_STATES),
                        byState(recentOrLive("transfer_order", LIVE_ORDER_STATES), since, ORDER_STATES),
                        attention())
                .map(t -> new Snapshot(t.getT1(), t.getT2(), t.getT3(), t.getT4(), t.getT5()));
    }

    private static String recentOrLive(String table, List<String> live) {
        String states = String.join("','", live);
        return "SELECT state, count(*) AS n FROM " + table + " WHERE state IN ('" + states + "') GROUP BY state "
                + "UNION ALL SELECT state, count(*) AS n FROM " + table + " WHERE state NOT IN ('" + states
                + "') AND created_at >= :since GROUP BY state";
    }

    private Mono<Map<String, Long>> byState(String sql, List<String> order) {
        return collect(db.sql(sql), order);
    }

    private Mono<Map<String, Long>> byState(String sql, Instant since, List<String> order) {
        return collect(db.sql(sql).bind("since", since.atOffset(ZoneOffset.UTC)), order);
    }

    private static Mono<Map<String, Long>> collect(DatabaseClient.GenericExecuteSpec spec, List<String> order) {
        return spec.map((row, meta) -> Map.entry(row.get("state", String.class), row.get("n", Long.class)))
                .all()
                .collectMap(Map.Entry::getKey, Map.Entry::getValue)
                .map(found -> {
                    Map<String, Long> ordered = new LinkedHashMap<>();
                    order.forEach(s -> ordered.put(s, found.getOrDefault(s, 0L)));
                    found.forEach(ordered::putIfAbsent);
                    return ordered;
                });
    }

    private Mono<Attention> attention() {
        return db.sql("""
                        SELECT
                          (SELECT count(*) FROM lease WHERE state = 'UNCERTAIN') AS uncertain,
                          (SELECT count(*) FROM lease WHERE state IN ('PROPOSED', 'SOURCE_PINNED', 'TRANSFERRING',
                               'DELIVERED', 'RELEASING') AND transfer_deadline < :now) AS overdue,
                          (SELECT count(*) FROM engine_incarnation WHERE state IN ('SUSPECT', 'LOST', 'RECLAIM_PENDING'))
                               AS unhealthy,
                          (SELECT count(DISTINCT b.bank_id) FROM retained_bank b JOIN bank_part p ON p.bank_id = b.bank_id
                               WHERE b.state <> 'DROPPED' AND (p.needs_snapshot OR b.rank_disagreement)) AS banks
                        """)
                .bind("now", clock.instant().atOffset(ZoneOffset.UTC))
                .map((row, meta) -> new Attention(
                        row.get("uncertain", Long.class),
                        row.get("overdue", Long.class),
                        row.get("unhealthy", Long.class),
                        row.get("banks", Long.class)))
                .one();
    }

    /** What may need an operator: UNCERTAIN or overdue leases, unhealthy incarnations, broken banks. */
    record Attention(long uncertainLeases, long overdueLeases, long unhealthyIncarnations, long banksNeedingRepair) {
        public boolean any() {
            return uncertainLeases + overdueLeases + unhealthyIncarnations + banksNeedingRepair > 0;
        }
    }

    /** Counts by state, in lifecycle order. */
    record Snapshot(
            Map<String, Long> incarnations,
            Map<String, Long> banks,
            Map<String, Long> leases,
            Map<String, Long> orders,
            Attention attention) {}
}
