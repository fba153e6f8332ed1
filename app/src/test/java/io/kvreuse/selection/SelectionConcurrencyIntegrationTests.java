package io.kvreuse.selection;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.bank.InventoryFeed;
import io.kvreuse.security.Role;
import io.kvreuse.support.Fleet;
import io.kvreuse.support.Fleet.Engine;
import io.kvreuse.support.IntegrationTest;
import io.kvreuse.support.ReuseSettingsFixture;
import io.kvreuse.support.TestTokens;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.http.MediaType;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/** Ingestion and thousands of selections at once, over real HTTP, against one fleet. */
@IntegrationTest
class SelectionConcurrencyIntegrationTests {

    private static final ParameterizedTypeReference<Map<String, Object>> JSON = new ParameterizedTypeReference<>() {};

    @Autowired
    WebTestClient http;

    @Autowired
    TestTokens tokens;

    @Autowired
    InventoryFeed inventory;

    @Autowired
    FleetDirectory directory;

    @Autowired
    DatabaseClient db;

    @LocalServerPort
    int port;

    ReuseSettingsFixture settings;

    @BeforeEach
    void setUp() {
        settings = new ReuseSettingsFixture(http, tokens.operator());
        settings.apply(ReuseSettingsFixture::permissive);
    }

    @AfterEach
    void restore() {
        settings.restore();
    }

    @Test
    void selectionsDuringIngestionNeverFailAndEndConsistentWithTheFinalState() {
        Fleet fleet = new Fleet(http, tokens);
        String domain = fleet.domain(2, "GPU_CUDA_IPC");
        String host = Fleet.host();
        var s = new SelectionTestSupport(http, fleet, inventory, directory, db, tokens.mint(Role.ROUTER));
        long[] chain = Fleet.chain(256);
        var donor = s.donor(domain, 2, host, Arrays.copyOf(chain, 8), 256);
        Engine target = s.target(domain, 2, host);

        WebClient client =
                WebClient.builder().baseUrl("http://localhost:" + port).build();
        Map<Integer, AtomicInteger> fetchSeen = new ConcurrentHashMap<>();
        AtomicInteger statusErrors = new AtomicInteger();
        // the donor's chain grows 8 blocks per batch on both ranks while routers ask for the whole chain
        Mono<Void> ingest = Flux.range(1, 31)
                .concatMap(step -> Flux.range(0, 2)
                        .concatMap(rank -> client.post()
                                .uri("/api/v1/banks/{b}/events", donor.bankId())
                                .header(
                                        "Authorization",
                                        "Bearer " + donor.engine().token())
                                .contentType(MediaType.APPLICATION_JSON)
                                .bodyValue(Map.of(
                                        "rank",
                                        rank,
                                        "firstEventId",
                                        step + 1,
                                        "events",
                                        List.of(stored(chain, step * 8, 8))))
                                .retrieve()
                                .toBodilessEntity()))
                .then();
        Mono<Void> select = Flux.range(0, 2000)
                .flatMap(
                        i -> client.post()
                                .uri("/api/v1/donor-selections")
                                .header("Authorization", "Bearer " + s.router)
                                .contentType(MediaType.APPLICATION_JSON)
                                .bodyValue(request(target.id(), chain))
                                .exchangeToMono(r -> {
                                    if (!r.statusCode().is2xxSuccessful()) {
                                        statusErrors.incrementAndGet();
                                    }
                                    return r.bodyToMono(JSON);
                                })
                                .doOnNext(answer -> fetchSeen
                                        .computeIfAbsent(fetchBlocks(answer), k -> new AtomicInteger())
                                        .incrementAndGet()),
                        32)
                .then();
        Mono.when(ingest, select).block(Duration.ofMinutes(3));

        assertThat(statusErrors).hasValue(0);
        assertThat(fetchSeen.keySet())
                .as("every hint is a whole number of 8-block batches")
                .allMatch(k -> k == -1 || k % 8 == 0);
        s.awaitIndexed(donor.bankId());
        assertThat(SelectionTestSupport.payload(s.select(target.id(), chain, 0)))
                .containsEntry("fetch_blocks", 256);
    }

    private static int fetchBlocks(Map<String, Object> answer) {
        if (!"HINT".equals(answer.get("decision"))) {
            return -1;
        }
        @SuppressWarnings("unchecked")
        Map<String, Object> predicted = (Map<String, Object>) answer.get("predicted");
        return ((Number) predicted.get("fetchBlocks")).intValue();
    }

    private static Map<String, Object> stored(long[] chain, int from, int count) {
        List<Map<String, Object>> blocks = new ArrayList<>();
        for (int i = from; i < from + count; i++) {
            Map<String, Object> b = new LinkedHashMap<>();
            b.put("seqHash", Long.toUnsignedString(chain[i]));
            if (i > 0) {
                b.put("parentHash", Long.toUnsignedString(chain[i - 1]));
            }
            b.put("position", i);
            b.put("slot", i);
            blocks.add(b);
        }
        return Map.of("type", "STORED", "blocks", blocks);
    }

    private static Map<String, Object> request(String targetId, long[] chain) {
        return Map.of(
                "requestId",
                "req-" + UUID.randomUUID(),
                "targetIncarnationId",
                targetId,
                "seqHashes",
                Arrays.stream(chain).mapToObj(Long::toUnsignedString).toList(),
                "localPrefixBlocks",
                0);
    }
}
