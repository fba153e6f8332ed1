package io.kvreuse.selection;

import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;

/**
 * Leases in flight per donor and per target, for the selection caps. The counts come from
 * PostgreSQL every refresh (so every replica's leases count) plus what this replica proposed since;
 * a PROPOSED lease counts until the sweeper expires it, as in the store's admission.
 */
@Component
class InflightLeases {

    private static final Log log = LogFactory.getLog(InflightLeases.class);
    /** Each party's leases in flight, from the lease package's counters (V82): a row per party, not per lease. */
    private static final String COUNTS = """
            SELECT incarnation_id AS id, side, kvreuse_leases_in_flight(incarnation_id, side) AS n FROM lease_inflight""";

    private final DatabaseClient db;
    private final java.time.Clock clock;
    private volatile Counts stored = new Counts(Map.of(), Map.of());
    // proposals committed since the last refresh started, and those of the generation before it
    private volatile Local current = new Local();
    private volatile Local previous = new Local();

    InflightLeases(DatabaseClient db, java.time.Clock clock) {
        this.db = db;
        this.clock = clock;
    }

    private record Counts(Map<UUID, Integer> donors, Map<UUID, Integer> targets) {}

    private record Local(Map<UUID, AtomicInteger> donors, Map<UUID, AtomicInteger> targets) {
        Local() {
            this(new ConcurrentHashMap<>(), new ConcurrentHashMap<>());
        }
    }

    int donor(UUID id) {
        return stored.donors().getOrDefault(id, 0) + count(current.donors(), id) + count(previous.donors(), id);
    }

    int target(UUID id) {
        return stored.targets().getOrDefault(id, 0) + count(current.targets(), id) + count(previous.targets(), id);
    }

    /** Call after the PROPOSED lease committed. */
    void proposed(UUID donor, UUID target) {
        Local local = current;
        local.donors().computeIfAbsent(donor, k -> new AtomicInteger()).incrementAndGet();
        local.targets().computeIfAbsent(target, k -> new AtomicInteger()).incrementAndGet();
    }

    @Scheduled(fixedDelayString = "${kvreuse.selection.inflight-refresh:1s}")
    void refresh() {
        Map<UUID, Integer> donors = new HashMap<>();
        Map<UUID, Integer> targets = new HashMap<>();
        previous = current;
        current = new Local();
        db.sql(COUNTS)
                .map((row, meta) -> {
                    Map<UUID, Integer> side = "D".equals(row.get("side", String.class)) ? donors : targets;
                    side.put(row.get("id", UUID.class), (int) Math.min(Integer.MAX_VALUE, row.get("n", Long.class)));
                    return 1;
                })
                .all()
                .then(Mono.fromRunnable(() -> {
                    // the previous generation committed before the query began, so the query counted it;
                    // proposals since may be counted twice until the next refresh: the safe side of a cap
                    stored = new Counts(donors, targets);
                    previous = new Local();
                }))
                .subscribe(null, e -> log.debug("in-flight refresh failed: " + e.getMessage()));
    }

    private static int count(Map<UUID, AtomicInteger> map, UUID id) {
        AtomicInteger n = map.get(id);
        return n == null ? 0 : n.get();
    }
}
