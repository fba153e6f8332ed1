package io.kvreuse.bank;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.support.Fleet;
import io.kvreuse.support.Fleet.Engine;
import io.kvreuse.support.IntegrationTest;
import io.kvreuse.support.TestTokens;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.MediaType;
import org.springframework.r2dbc.connection.R2dbcTransactionManager;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.transaction.reactive.TransactionalOperator;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;

/**
 * An inventory batch or snapshot whose store work cannot finish (its table held by another
 * transaction) is answered {@code 503 store-unavailable} once a statement has waited {@code
 * kvreuse.inventory.store-timeout} (10 s by default; three times that for the bank's row lock),
 * applies nothing, and goes through once the store is free again.
 */
@IntegrationTest
class IngestionStoreTimeoutIntegrationTests {

    private static final Duration BOUND = Duration.ofSeconds(10);

    @Autowired
    WebTestClient http;

    @Autowired
    TestTokens tokens;

    @Autowired
    DatabaseClient db;

    Fleet fleet;
    Engine decode;

    @BeforeEach
    void fleet() {
        fleet = new Fleet(http, tokens);
        decode = fleet.ready("DECODE", fleet.domain(2, "GPU_CUDA_IPC"), 2, Fleet.host());
    }

    @Test
    void aBatchStalledOnTheStoreIsAStoreUnavailableProblemWithinTheBoundAndARetryApplies() {
        String bankId = fleet.bank(decode, 2, 64);
        long[] chain = Fleet.chain(8);
        Map<String, Object> batch =
                RetainedBankIntegrationTests.events(0, 1, RetainedBankIntegrationTests.stored(chain, 0));
        WebTestClient patient =
                http.mutate().responseTimeout(Duration.ofSeconds(30)).build();
        Disposable locker = stall("bank_block", Duration.ofSeconds(40));
        try {
            awaitLocked("bank_block");
            long start = System.nanoTime();
            patient.post()
                    .uri("/api/v1/banks/" + bankId + "/events")
                    .header("Authorization", "Bearer " + decode.token())
                    .contentType(MediaType.APPLICATION_JSON)
                    .bodyValue(batch)
                    .exchange()
                    .expectStatus()
                    .isEqualTo(503)
                    .expectHeader()
                    .contentType(MediaType.APPLICATION_PROBLEM_JSON)
                    .expectBody()
                    .jsonPath("$.type")
                    .isEqualTo("https://kvreuse.io/problems/store-unavailable")
                    .jsonPath("$.retryable")
                    .isEqualTo(true);
            long tookMs = (System.nanoTime() - start) / 1_000_000;
            assertThat(tookMs)
                    .as("answered at the bound, not when the stall ends")
                    .isGreaterThanOrEqualTo(BOUND.toMillis() - 100)
                    .isLessThan(BOUND.toMillis() + 4000);
        } finally {
            locker.dispose();
        }
        awaitUnlocked("bank_block");
        assertThat(blockRows(bankId)).as("the stalled batch stored nothing").isZero();
        assertThat(applied(bankId)).as("nor moved the rank's event position").containsExactly(0L, 0L);

        Map<String, Object> answer = fleet.post("/api/v1/banks/" + bankId + "/events", decode.token(), batch, 200);
        assertThat(answer).containsEntry("appliedThroughEventId", 1);
        assertThat(blockRows(bankId)).isEqualTo(chain.length);
        assertThat(applied(bankId)).containsExactly(1L, 0L);
    }

    @Test
    void aSnapshotStalledOnTheStoreIsAStoreUnavailableProblemWithinTheBoundAndARetryApplies() {
        String bankId = fleet.bank(decode, 2, 64);
        long[] chain = Fleet.chain(4);
        List<Map<String, Object>> blocks = blocks(chain);
        Map<String, Object> snapshot = Map.of("throughEventId", 7, "blocks", blocks);
        WebTestClient patient =
                http.mutate().responseTimeout(Duration.ofSeconds(30)).build();
        Disposable locker = stall("bank_block", Duration.ofSeconds(40));
        try {
            awaitLocked("bank_block");
            long start = System.nanoTime();
            patient.put()
                    .uri("/api/v1/banks/" + bankId + "/parts/1/snapshot")
                    .header("Authorization", "Bearer " + decode.token())
                    .contentType(MediaType.APPLICATION_JSON)
                    .bodyValue(snapshot)
                    .exchange()
                    .expectStatus()
                    .isEqualTo(503)
                    .expectBody()
                    .jsonPath("$.type")
                    .isEqualTo("https://kvreuse.io/problems/store-unavailable");
            long tookMs = (System.nanoTime() - start) / 1_000_000;
            assertThat(tookMs).isGreaterThanOrEqualTo(BOUND.toMillis() - 100).isLessThan(BOUND.toMillis() + 4000);
        } finally {
            locker.dispose();
        }
        awaitUnlocked("bank_block");
        assertThat(blockRows(bankId)).isZero();
        assertThat(applied(bankId)).containsExactly(0L, 0L);
        patient.put()
                .uri("/api/v1/banks/" + bankId + "/parts/1/snapshot")
                .header("Authorization", "Bearer " + decode.token())
                .contentType(MediaType.APPLICATION_JSON)
                .bodyValue(snapshot)
                .exchange()
                .expectStatus()
                .isOk();
        assertThat(blockRows(bankId)).isEqualTo(chain.length);
        assertThat(applied(bankId)).containsExactly(0L, 7L);
    }

    private static List<Map<String, Object>> blocks(long[] chain) {
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> blocks = (List<Map<String, Object>>)
                RetainedBankIntegrationTests.stored(chain, 0).get("blocks");
        return blocks;
    }

    /** Holds {@code table} in ACCESS EXCLUSIVE mode in a transaction of its own for up to {@code hold}. */
    private Disposable stall(String table, Duration hold) {
        return inTransaction(db.sql("LOCK TABLE " + table + " IN ACCESS EXCLUSIVE MODE")
                .then()
                .then(Mono.delay(hold))
                .then());
    }

    /** Runs {@code work} in a transaction of its own; disposing it rolls the transaction back. */
    private Disposable inTransaction(Mono<Void> work) {
        return work.as(
                        TransactionalOperator.create(new R2dbcTransactionManager(db.getConnectionFactory()))
                                ::transactional)
                .subscribe(v -> {}, e -> {});
    }

    private void awaitLocked(String table) {
        await(() -> locks(table) > 0, table + " locked");
    }

    private void awaitUnlocked(String table) {
        await(() -> locks(table) == 0, table + " free again");
    }

    private long locks(String table) {
        return db.sql("""
                        SELECT count(*) AS n FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
                        WHERE c.relname = :t AND l.granted AND l.pid <> pg_backend_pid()
                          AND l.mode = 'AccessExclusiveLock'
                        """)
                .bind("t", table)
                .map((row, meta) -> row.get("n", Long.class))
                .one()
                .block(Duration.ofSeconds(5));
    }

    private static void await(java.util.function.BooleanSupplier condition, String what) {
        long deadline = System.nanoTime() + Duration.ofSeconds(15).toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("not within 15 s: " + what);
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
    }

    private long blockRows(String bankId) {
        return db.sql("SELECT count(*) AS n FROM bank_block WHERE bank_id = :b")
                .bind("b", UUID.fromString(bankId))
                .map((row, meta) -> row.get("n", Long.class))
                .one()
                .block(Duration.ofSeconds(5));
    }

    private List<Long> applied(String bankId) {
        return db.sql("SELECT last_event_id FROM bank_part WHERE bank_id = :b ORDER BY rank")
                .bind("b", UUID.fromString(bankId))
                .map((row, meta) -> row.get("last_event_id", Long.class))
                .all()
                .collectList()
                .block(Duration.ofSeconds(5));
    }
}
