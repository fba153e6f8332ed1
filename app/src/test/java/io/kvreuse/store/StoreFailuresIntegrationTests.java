package io.kvreuse.store;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.support.IntegrationTest;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.r2dbc.core.DatabaseClient;

/**
 * What the real driver reports when PostgreSQL goes away under a statement, and what it reports for
 * the application's own errors: only the first is the store failing. A database stopped while a
 * statement runs ends its backend as {@code pg_terminate_backend} does (57P01), and a router's
 * token check caught that way must fail open, not answer 503 (it did, once, in the system suite's
 * database outage).
 */
@IntegrationTest
class StoreFailuresIntegrationTests {

    @Autowired
    DatabaseClient db;

    @Test
    void aStatementWhoseBackendTheServerEndsIsAStoreFailure() throws Exception {
        String marker = "kvreuse-store-failure-" + System.nanoTime();
        CompletableFuture<Throwable> failed = new CompletableFuture<>();
        db.sql("SELECT pg_sleep(30) /* " + marker + " */")
                .then()
                .subscribe(null, failed::complete, () -> failed.complete(null));
        // the statement shows in pg_stat_activity once its backend runs it: looked for every 50 ms,
        // for at most 10 s
        Integer ended = db.sql("""
                        SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
                        WHERE query LIKE :pattern AND pid <> pg_backend_pid()
                        """)
                .bind("pattern", "SELECT pg_sleep(30) /* " + marker + "%")
                .map((row, meta) -> row.get("n", Integer.class))
                .one()
                .filter(n -> n > 0)
                .repeatWhenEmpty(attempts -> attempts.delayElements(Duration.ofMillis(50)))
                .timeout(Duration.ofSeconds(10), reactor.core.publisher.Mono.just(0))
                .block();
        assertThat(ended)
                .as("the sleeping statement's backend was found and ended")
                .isEqualTo(1);
        Throwable failure = failed.get(10, java.util.concurrent.TimeUnit.SECONDS);
        assertThat(failure).as("the statement failed").isNotNull();
        assertThat(StoreFailures.isStoreFailure(failure))
                .as("a statement cut off by the server is the store failing: %s", failure)
                .isTrue();
    }

    @Test
    void theApplicationsOwnErrorsAreNotStoreFailures() {
        Throwable raised = failure("DO $$ BEGIN RAISE EXCEPTION 'no fast path' USING ERRCODE = 'KVR01'; END $$");
        assertThat(StoreFailures.isStoreFailure(raised)).as("%s", raised).isFalse();
        Throwable plain = failure("DO $$ BEGIN RAISE EXCEPTION 'broken'; END $$");
        assertThat(StoreFailures.isStoreFailure(plain)).as("%s", plain).isFalse();
        Throwable grammar = failure("SELEC 1");
        assertThat(StoreFailures.isStoreFailure(grammar)).as("%s", grammar).isFalse();
        Throwable division = failure("SELECT 1/0");
        assertThat(StoreFailures.isStoreFailure(division)).as("%s", division).isFalse();
    }

    private Throwable failure(String sql) {
        try {
            db.sql(sql).then().block();
        } catch (RuntimeException e) {
            return e;
        }
        throw new AssertionError("no error from " + sql);
    }
}
