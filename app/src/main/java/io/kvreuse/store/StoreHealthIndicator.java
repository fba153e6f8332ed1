package io.kvreuse.store;

import java.time.Duration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.ReactiveHealthIndicator;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;

/**
 * {@code store}: UP while PostgreSQL answers a trivial query within {@link #ANSWER_WITHIN}, DOWN
 * otherwise, so readiness answers within a second even when the database hangs (stopped backends,
 * a stalled disk) rather than fails fast. Boot's own {@code r2dbc} indicator waits as long as the
 * database does; it is turned off in favour of this one.
 */
@Component("store")
@ConditionalOnProperty(name = "kvreuse.role", havingValue = "control-plane", matchIfMissing = true)
class StoreHealthIndicator implements ReactiveHealthIndicator {

    static final Duration ANSWER_WITHIN = Duration.ofMillis(500);

    private final DatabaseClient db;

    StoreHealthIndicator(DatabaseClient db) {
        this.db = db;
    }

    @Override
    public Mono<Health> health() {
        return db.sql("SELECT 1 AS one")
                .map((row, meta) -> row.get("one", Integer.class))
                .one()
                .map(one -> Health.up().withDetail("database", "PostgreSQL").build())
                .timeout(ANSWER_WITHIN)
                .onErrorResume(e -> Mono.just(Health.down()
                        .withDetail("database", "PostgreSQL")
                        .withDetail(
                                "error",
                                e instanceof java.util.concurrent.TimeoutException
                                        ? "no answer within " + ANSWER_WITHIN.toMillis() + " ms"
                                        : e.getClass().getSimpleName())
                        .build()));
    }
}
