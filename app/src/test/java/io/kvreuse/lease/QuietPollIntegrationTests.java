package io.kvreuse.lease;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.kvreuse.support.IntegrationTest;
import io.kvreuse.support.LeaseWorld;
import io.kvreuse.support.MutableClock;
import io.kvreuse.support.TestTokens;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * Polls of a key this replica knows is quiet: a waiting poll sends no statement until a
 * notification, a reconnect or the next redelivery says something may be due, and a notification
 * that arrives while a look runs is never lost. The claims sent are read from the driver's query
 * log: the shared test database's own counters also move with the scheduled sweeps. The long poll's
 * own quiet marks are tested in {@code io.kvreuse.store.LongPollQuietIntegrationTests}.
 */
@IntegrationTest
class QuietPollIntegrationTests {

    @Autowired
    WebTestClient http;

    @Autowired
    TestTokens tokens;

    @Autowired
    MutableClock clock;

    private static final String COMMAND_CLAIM =
            "FROM engine_command WHERE incarnation_id = $1 AND acked_at IS NULL AND visible_at";
    private static final String ORDER_CLAIM =
            "FROM transfer_order o JOIN lease l ON l.lease_id = o.lease_id WHERE o.host_id";

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
        List<String> waiting = statements(() -> {
            long start = System.nanoTime();
            assertThat(w.commands(w.target, 400)).isEmpty();
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(350));
        });
        assertThat(waiting).noneMatch(q -> q.contains(COMMAND_CLAIM));
        List<String> once = statements(() -> assertThat(w.commands(w.target, 0)).isEmpty());
        assertThat(once).filteredOn(q -> q.contains(COMMAND_CLAIM)).hasSize(1);
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
        List<String> waiting =
                statements(() -> assertThat(w.orders(w.agentToken, w.host, 400)).isEmpty());
        assertThat(waiting).noneMatch(q -> q.contains(ORDER_CLAIM));
        List<String> once =
                statements(() -> assertThat(w.orders(w.agentToken, w.host, 0)).isEmpty());
        assertThat(once).filteredOn(q -> q.contains(ORDER_CLAIM)).hasSize(1);
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

    /**
     * The statements the driver sent to PostgreSQL while {@code action} ran, as its query log shows
     * them (the scheduled sweeps' statements too: callers look for the claims, which only polls send).
     */
    private static List<String> statements(Runnable action) {
        Logger log = (Logger) LoggerFactory.getLogger("io.r2dbc.postgresql.QUERY");
        Level level = log.getLevel();
        ListAppender<ILoggingEvent> sent = new ListAppender<>();
        sent.start();
        log.setLevel(Level.DEBUG);
        log.addAppender(sent);
        try {
            action.run();
        } finally {
            log.detachAppender(sent);
            log.setLevel(level);
        }
        return sent.list.stream()
                .map(e -> e.getFormattedMessage().replaceAll("\\s+", " "))
                .toList();
    }
}
