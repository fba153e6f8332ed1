package io.kvreuse.metrics;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Gauges of how many leases, incarnations, banks and node agents are in each state right now, fleet
 * wide. A scrape never reaches PostgreSQL: the counts are read every {@code
 * kvreuse.metrics.state-interval} (5 s) by a background task whose queries are cut off after {@link
 * #QUERY_TIMEOUT}, and the gauges show the last counts read. {@code kvreuse_fleet_state_age_seconds}
 * says how old they are, so a stalled database shows as a growing age instead of a hung scrape.
 * Before the first read the counts are NaN (unknown), never a made-up zero.
 *
 * <p>Only states that can still change are counted: leases that ended (RELEASED, EXPIRED),
 * incarnations that ended (EXITED, RECLAIMED) and dropped banks are history, which grows without
 * bound; their rates are in the transition counters.
 */
@Component
class StateGauges {

    static final Duration QUERY_TIMEOUT = Duration.ofSeconds(2);

    static final List<String> LEASE_STATES = List.of(
            "PROPOSED",
            "SOURCE_PINNED",
            "TRANSFERRING",
            "DELIVERED",
            "COMMITTED",
            "RELEASING",
            "REFUSED",
            "FAILED",
            "UNCERTAIN");
    static final List<String> INCARNATION_STATES =
            List.of("REGISTERED", "READY", "DRAINING", "SUSPECT", "LOST", "RECLAIM_PENDING");
    static final List<String> BANK_STATES = List.of("PENDING", "PUBLISHED", "UNPUBLISHED");
    static final List<String> AGENT_STATES = List.of("ONLINE", "SUSPECT", "OFFLINE");

    private static final Log log = LogFactory.getLog(StateGauges.class);

    private final DatabaseClient db;
    private final Clock clock;
    private final List<Family> families;
    private final AtomicReference<Instant> readAt = new AtomicReference<>();

    StateGauges(DatabaseClient db, Clock clock, MeterRegistry meters) {
        this.db = db;
        this.clock = clock;
        this.families = List.of(
                new Family(
                        "kvreuse.leases",
                        "leases in each state that can still change (fleet wide, read from PostgreSQL)",
                        "lease",
                        LEASE_STATES,
                        meters),
                new Family(
                        "kvreuse.incarnations",
                        "engine incarnations in each state that can still change (fleet wide, read from PostgreSQL)",
                        "engine_incarnation",
                        INCARNATION_STATES,
                        meters),
                new Family(
                        "kvreuse.banks",
                        "retained banks in each state other than DROPPED (fleet wide, read from PostgreSQL)",
                        "retained_bank",
                        BANK_STATES,
                        meters),
                new Family(
                        "kvreuse.node.agents",
                        "node agents in each state (fleet wide, read from PostgreSQL)",
                        "node_agent",
                        AGENT_STATES,
                        meters));
        Gauge.builder("kvreuse.fleet.state.age", this, StateGauges::ageSeconds)
                .description(
                        "seconds since the state gauges (kvreuse_leases and the others) were last read from PostgreSQL")
                .baseUnit("seconds")
                .register(meters);
    }

    @Scheduled(fixedDelayString = "${kvreuse.metrics.state-interval:5s}")
    Mono<Void> scheduledRefresh() {
        return refresh().onErrorResume(e -> {
            log.debug("state gauges not refreshed; keeping the last counts: " + e);
            return Mono.empty();
        });
    }

    /** Reads every family's counts; the gauges change only when all of them were read. */
    Mono<Void> refresh() {
        // deferred: the scheduler subscribes to the same publisher at every interval
        return Mono.defer(() -> {
            Instant started = clock.instant();
            return Flux.fromIterable(families)
                    .concatMap(f -> f.read(db).map(counts -> Map.entry(f, counts)))
                    .collectList()
                    .timeout(QUERY_TIMEOUT)
                    .doOnNext(read -> {
                        read.forEach(e -> e.getKey().set(e.getValue()));
                        readAt.set(started);
                    })
                    .then();
        });
    }

    private double ageSeconds() {
        Instant at = readAt.get();
        return at == null
                ? Double.NaN
                : Math.max(0, Duration.between(at, clock.instant()).toMillis() / 1000.0);
    }

    /** One gauge family: a gauge per state, each reading the last count of its state. */
    private static final class Family {

        private final String table;
        private final List<String> states;
        private final Map<String, AtomicReference<Double>> values = new LinkedHashMap<>();

        Family(String name, String help, String table, List<String> states, MeterRegistry meters) {
            this.table = table;
            this.states = states;
            for (String state : states) {
                AtomicReference<Double> value = new AtomicReference<>(Double.NaN);
                values.put(state, value);
                Gauge.builder(name, value, AtomicReference::get)
                        .description(help)
                        .tag("state", state)
                        .register(meters);
            }
        }

        /** Counts by state, over the state index; states with no row count 0. */
        Mono<Map<String, Double>> read(DatabaseClient db) {
            // table and states are this class's constants, never input
            String sql = "SELECT state, count(*) AS n FROM " + table + " WHERE state IN ('"
                    + String.join("', '", states) + "') GROUP BY state";
            return db.sql(sql)
                    .map((row, meta) -> Map.entry((String) row.get("state"), ((Number) row.get("n")).doubleValue()))
                    .all()
                    .collectMap(Map.Entry::getKey, Map.Entry::getValue);
        }

        void set(Map<String, Double> counts) {
            values.forEach((state, value) -> value.set(counts.getOrDefault(state, 0.0)));
        }
    }
}
