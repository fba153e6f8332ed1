package io.kvreuse.lease;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.store.PgNotifications;
import io.kvreuse.support.IntegrationTest;
import io.kvreuse.support.LeaseWorld;
import io.kvreuse.support.MutableClock;
import io.kvreuse.support.TestTokens;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.test.web.reactive.server.WebTestClient;
import reactor.core.publisher.Mono;

/**
 * Polls of a key this replica knows is quiet: a waiting poll sends no statement until a
 * notification, a reconnect or the next redelivery says something may be due, and a notification
 * that arrives while a look runs is never lost. Statements are counted by PostgreSQL's own table
 * statistics of {@code engine_command} and {@code transfer_order}, which every claim scans.
 */
@IntegrationTest
class QuietPollIntegrationTests {

    @Autowired
    WebTestClient http;

    @Autowired
    TestTokens tokens;

    @Autowired
    MutableClock clock;

    @Autowired
    DatabaseClient db;

    @Autowired
    LongPoll longPoll;

    LeaseWorld w;

    @BeforeEach
    void world() {
        w = new LeaseWorld(http, tokens, 1, 30_000, 60_000, 120_000);
    }

    @AfterEach
    void restore() {
        w.restore();
    }

    @Test
    void aWaitingPollOfAQuietIncarnationSendsNoStatementAndAPollWithoutWaitDoes() {
        assertThat(w.commands(w.target, 0)).isEmpty();
        long before = settledScans("engine_command");
        long start = System.nanoTime();
        assertThat(w.commands(w.target, 400)).isEmpty();
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(350));
        assertThat(settledScans("engine_command")).isEqualTo(before);
        assertThat(w.commands(w.target, 0)).isEmpty();
        assertThat(scansAfter("engine_command", before)).isGreaterThan(before);
    }

    @Test
    void aQuietIncarnationWakesOnItsNotificationAndLooksAgainWhenAHiddenCommandComesDue() throws Exception {
        assertThat(w.commands(w.donor, 0)).isEmpty();
        CompletableFuture<List<Map<String, Object>>> poll =
                CompletableFuture.supplyAsync(() -> w.commands(w.donor, 8_000));
        LeaseWorld.sleep(500);
        assertThat(poll).isNotDone();
        String lease = w.propose();
        List<Map<String, Object>> first = poll.get(8, TimeUnit.SECONDS);
        assertThat(first).singleElement().satisfies(c -> {
            assertThat(c.get("type")).isEqualTo("PIN");
            assertThat(c.get("leaseId")).isEqualTo(lease);
            assertThat(c.get("deliveries")).isEqualTo(1);
        });
        assertThat(w.commands(w.donor, 0)).isEmpty();
        assertThat(w.commands(w.donor, 200)).isEmpty();
        clock.advance(Duration.ofMillis(2_100));
        assertThat(w.commands(w.donor, 200)).singleElement().satisfies(c -> {
            assertThat(c.get("commandId")).isEqualTo(first.getFirst().get("commandId"));
            assertThat(c.get("deliveries")).isEqualTo(2);
        });
    }

    @Test
    void aWaitingOrderPollOfAQuietHostSendsNoStatementAndWakesOnItsOrder() throws Exception {
        assertThat(w.orders(w.agentToken, w.host, 0)).isEmpty();
        long before = settledScans("transfer_order");
        assertThat(w.orders(w.agentToken, w.host, 400)).isEmpty();
        assertThat(settledScans("transfer_order")).isEqualTo(before);
        CompletableFuture<List<Map<String, Object>>> poll =
                CompletableFuture.supplyAsync(() -> w.orders(w.agentToken, w.host, 10_000));
        LeaseWorld.sleep(300);
        String lease = w.propose();
        w.destination(lease, 0).expectStatus().isOk();
        w.pinAll(lease);
        List<Map<String, Object>> orders = poll.get(10, TimeUnit.SECONDS);
        assertThat(orders).singleElement().satisfies(o -> {
            assertThat(o.get("leaseId")).isEqualTo(lease);
            assertThat(o.get("claims")).isEqualTo(1);
        });
        assertThat(w.state(lease)).isEqualTo("TRANSFERRING");
        // claimed and unacknowledged: quiet until its visibility timeout, then handed out again
        assertThat(w.orders(w.agentToken, w.host, 0)).isEmpty();
        assertThat(w.orders(w.agentToken, w.host, 200)).isEmpty();
        clock.advance(Duration.ofMillis(5_100));
        w.fleet.heartbeat(w.donor);
        w.fleet.heartbeat(w.target);
        assertThat(w.orders(w.agentToken, w.host, 200)).singleElement().satisfies(o -> {
            assertThat(o.get("orderId")).isEqualTo(orders.getFirst().get("orderId"));
            assertThat(o.get("claims")).isEqualTo(2);
        });
    }

    @Test
    void aNotificationThatArrivesWhileALookRunsIsNotLost() {
        String key = UUID.randomUUID().toString();
        AtomicInteger looks = new AtomicInteger();
        long start = System.nanoTime();
        List<String> found = longPoll.<String>poll(PgNotifications.COMMANDS, key, Duration.ofSeconds(6), () -> {
                    int n = looks.incrementAndGet();
                    Mono<Void> notify = n == 1
                            ? db.sql("SELECT pg_notify(:c, :k)")
                                    .bind("c", PgNotifications.COMMANDS)
                                    .bind("k", key)
                                    .then()
                            : Mono.empty();
                    return notify.then(Mono.delay(Duration.ofMillis(300)))
                            .thenReturn(new LongPoll.Look<>(n == 1 ? List.of() : List.of("work"), Instant.MAX));
                })
                .block(Duration.ofSeconds(10));
        assertThat(found).containsExactly("work");
        assertThat(looks).hasValue(2);
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(4));
        // the first look's empty answer did not mark the key quiet: a waiting poll looks again, once
        assertThat(quietPoll(key, looks)).isEmpty();
        assertThat(looks).hasValue(3);
        // and that look's empty answer did: the next waiting poll looks no more
        assertThat(quietPoll(key, looks)).isEmpty();
        assertThat(looks).hasValue(3);
    }

    private List<String> quietPoll(String key, AtomicInteger looks) {
        return longPoll.<String>poll(PgNotifications.COMMANDS, key, Duration.ofMillis(200), () -> {
                    looks.incrementAndGet();
                    return Mono.just(new LongPoll.Look<String>(List.of(), Instant.MAX));
                })
                .block(Duration.ofSeconds(5));
    }

    /** Scans of the table once the server's statistics stopped moving (they flush within about 1 s). */
    private long settledScans(String table) {
        long last = scans(table);
        for (int i = 0; i < 20; i++) {
            LeaseWorld.sleep(600);
            long now = scans(table);
            if (now == last) {
                return now;
            }
            last = now;
        }
        return last;
    }

    private long scansAfter(String table, long before) {
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        long now = scans(table);
        while (now == before && System.nanoTime() < deadline) {
            LeaseWorld.sleep(200);
            now = scans(table);
        }
        return now;
    }

    private long scans(String table) {
        return db.sql("SELECT COALESCE(seq_scan, 0) + COALESCE(idx_scan, 0) AS n FROM pg_stat_user_tables"
                        + " WHERE relname = :t")
                .bind("t", table)
                .map((r, m) -> r.get("n", Long.class))
                .one()
                .block();
    }
}
