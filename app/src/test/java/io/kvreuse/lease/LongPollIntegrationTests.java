package io.kvreuse.lease;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.support.IntegrationTest;
import io.kvreuse.support.LeaseWorld;
import io.kvreuse.support.MutableClock;
import io.kvreuse.support.TestTokens;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.web.reactive.server.WebTestClient;

@IntegrationTest
class LongPollIntegrationTests {

    @Autowired
    WebTestClient http;

    @Autowired
    TestTokens tokens;

    @Autowired
    MutableClock clock;

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
    void anEmptyPollWaitsForItsTimeoutAndAnswersAnEmptyList() {
        long start = System.nanoTime();
        assertThat(w.commands(w.target, 400)).isEmpty();
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(350));
    }

    @Test
    void aWaitingPollWakesOnNewWork() throws Exception {
        long start = System.nanoTime();
        CompletableFuture<List<Map<String, Object>>> poll =
                CompletableFuture.supplyAsync(() -> w.commands(w.donor, 8_000));
        LeaseWorld.sleep(500);
        assertThat(poll).isNotDone();
        String lease = w.propose();
        List<Map<String, Object>> commands = poll.get(8, TimeUnit.SECONDS);
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
        assertThat(commands).singleElement().satisfies(c -> {
            assertThat(c.get("type")).isEqualTo("PIN");
            assertThat(c.get("leaseId")).isEqualTo(lease);
        });
    }

    @Test
    void unacknowledgedCommandsAreRedeliveredAndAcknowledgedOnesAreNot() {
        String lease = w.propose();
        List<Map<String, Object>> first = w.commands(w.donor, 2_000);
        assertThat(first)
                .singleElement()
                .satisfies(c -> assertThat(c.get("deliveries")).isEqualTo(1));
        assertThat(w.commands(w.donor, 0)).isEmpty();
        clock.advance(Duration.ofMillis(2_100));
        List<Map<String, Object>> again = w.commands(w.donor, 0);
        assertThat(again).singleElement().satisfies(c -> {
            assertThat(c.get("commandId")).isEqualTo(first.getFirst().get("commandId"));
            assertThat(c.get("deliveries")).isEqualTo(2);
        });
        w.ack(w.donor, first.getFirst().get("commandId"), true, w.epoch(w.donor))
                .expectStatus()
                .isOk();
        clock.advance(Duration.ofMillis(2_100));
        assertThat(w.commands(w.donor, 0)).isEmpty();
        assertThat(w.state(lease)).isEqualTo("SOURCE_PINNED");
    }

    @Test
    void aClaimedOrderNoPartAcknowledgedIsHandedOutAgainAfterTheVisibilityTimeout() {
        String lease = ready(0);
        Map<String, Object> order = w.orders(w.agentToken, w.host, 2_000).getFirst();
        assertThat(w.orders(w.agentToken, w.host, 0)).isEmpty();
        clock.advance(Duration.ofMillis(5_100));
        w.fleet.heartbeat(w.donor);
        w.fleet.heartbeat(w.target);
        List<Map<String, Object>> again = w.orders(w.agentToken, w.host, 0);
        assertThat(again).singleElement().satisfies(o -> {
            assertThat(o.get("orderId")).isEqualTo(order.get("orderId"));
            assertThat(o.get("claims")).isEqualTo(2);
        });
        w.part(order.get("orderId"), 0, "RUNNING", 0).expectStatus().isOk();
        clock.advance(Duration.ofMillis(5_100));
        assertThat(w.orders(w.agentToken, w.host, 0)).isEmpty();
        assertThat(w.state(lease)).isEqualTo("TRANSFERRING");
    }

    @Test
    void concurrentPollersNeverReceiveOneOrderTwice() throws Exception {
        int leases = 16;
        for (int i = 0; i < leases; i++) {
            ready(i * 8);
        }
        Set<Object> seen = ConcurrentHashMap.newKeySet();
        ConcurrentLinkedQueue<Object> received = new ConcurrentLinkedQueue<>();
        ExecutorService pool = Executors.newFixedThreadPool(6);
        try {
            List<CompletableFuture<Void>> pollers = new ArrayList<>();
            for (int p = 0; p < 6; p++) {
                pollers.add(CompletableFuture.runAsync(
                        () -> {
                            long deadline =
                                    System.nanoTime() + Duration.ofSeconds(20).toNanos();
                            while (seen.size() < leases && System.nanoTime() < deadline) {
                                for (Map<String, Object> o : w.orders(w.agentToken, w.host, 300)) {
                                    received.add(o.get("orderId"));
                                    seen.add(o.get("orderId"));
                                }
                            }
                        },
                        pool));
            }
            CompletableFuture.allOf(pollers.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
        } finally {
            pool.shutdownNow();
        }
        assertThat(seen).hasSize(leases);
        assertThat(received).hasSize(leases);
    }

    private String ready(int destinationStart) {
        String lease = w.propose();
        w.destination(lease, destinationStart).expectStatus().isOk();
        w.pinAll(lease);
        return lease;
    }
}
