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
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.UUID;
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

/**
 * The in-flight caps hold under real concurrent requests: parallel single selections, one batch,
 * parallel batches, and a mix of both. Each test has its own donor and targets, and its PROPOSED
 * leases stay live for the whole test (TTL one minute), so exactly the cap may be granted.
 */
@IntegrationTest
class SelectionCapsIntegrationTests {

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
    SelectionTestSupport s;
    WebClient client;
    String domain;
    String host;

    @BeforeEach
    void setUp() {
        Fleet fleet = new Fleet(http, tokens);
        settings = new ReuseSettingsFixture(http, tokens.operator());
        settings.apply(doc -> {
            ReuseSettingsFixture.permissive(doc);
            doc.put("leaseTtlMs", 60_000);
        });
        s = new SelectionTestSupport(http, fleet, inventory, directory, db, tokens.mint(Role.ROUTER));
        client = WebClient.builder().baseUrl("http://localhost:" + port).build();
        domain = fleet.domain(2, "GPU_CUDA_IPC");
        host = Fleet.host();
    }

    @AfterEach
    void restore() {
        settings.restore();
    }

    @Test
    void oneBatchOfTwentyGrantsExactlyTheDonorCap() {
        var donor = s.donor(domain, 2, host, Fleet.chain(16));
        Engine target = s.target(domain, 2, host);
        caps(2, 100_000);
        List<Map<String, Object>> answers = batch(target, donor.chain(), 20).block(Duration.ofSeconds(60));
        assertGranted(answers, 2);
        assertLive("donor_incarnation_id", donor.engine().id(), 2);
    }

    @Test
    void fiftyParallelSinglesGrantExactlyTheDonorCap() {
        var donor = s.donor(domain, 2, host, Fleet.chain(16));
        Engine target = s.target(domain, 2, host);
        caps(2, 100_000);
        List<Map<String, Object>> answers = Flux.range(0, 50)
                .flatMap(i -> single(target, donor.chain()), 50)
                .collectList()
                .block(Duration.ofSeconds(60));
        assertGranted(answers, 2);
        assertLive("donor_incarnation_id", donor.engine().id(), 2);
    }

    @Test
    void twoParallelBatchesOfFiftyAndSinglesAmongThemGrantExactlyTheDonorCap() {
        var donor = s.donor(domain, 2, host, Fleet.chain(16));
        List<Engine> targets = List.of(s.target(domain, 2, host), s.target(domain, 2, host));
        caps(2, 100_000);
        List<Map<String, Object>> answers = Flux.merge(
                        batch(targets.get(0), donor.chain(), 50).flatMapMany(Flux::fromIterable),
                        batch(targets.get(1), donor.chain(), 50).flatMapMany(Flux::fromIterable),
                        Flux.range(0, 10).flatMap(i -> single(targets.get(i % 2), donor.chain()), 10))
                .collectList()
                .block(Duration.ofSeconds(60));
        assertThat(answers).hasSize(110);
        assertGranted(answers, 2);
        assertLive("donor_incarnation_id", donor.engine().id(), 2);
    }

    @Test
    void aTargetCapOfOneLetsOneOfTenParallelSelectionsThrough() {
        var donor = s.donor(domain, 2, host, Fleet.chain(16));
        Engine target = s.target(domain, 2, host);
        caps(100_000, 1);
        List<Map<String, Object>> answers = Flux.range(0, 10)
                .flatMap(i -> single(target, donor.chain()), 10)
                .collectList()
                .block(Duration.ofSeconds(60));
        assertGranted(answers, 1);
        assertLive("target_incarnation_id", target.id(), 1);
    }

    private void caps(int perDonor, int perTarget) {
        settings.apply(doc -> {
            doc.put("maxInflightPerDonor", perDonor);
            doc.put("maxInflightPerTarget", perTarget);
        });
    }

    private static void assertGranted(List<Map<String, Object>> answers, int cap) {
        List<Map<String, Object>> hints =
                answers.stream().filter(a -> "HINT".equals(a.get("decision"))).toList();
        List<Map<String, Object>> refused =
                answers.stream().filter(a -> !"HINT".equals(a.get("decision"))).toList();
        assertThat(hints).as("hints granted").hasSize(cap);
        assertThat(hints).allSatisfy(h -> assertThat(h).containsKeys("leaseId", "hint"));
        assertThat(refused)
                .as("every other answer is a no-hint AT_CAPACITY, with no lease and no hint")
                .allSatisfy(a -> assertThat(a)
                        .containsEntry("decision", "NO_HINT")
                        .containsEntry("reason", "AT_CAPACITY")
                        .doesNotContainKeys("leaseId", "hint", "predicted"));
    }

    /** The party's live leases in PostgreSQL: exactly the granted ones were written. */
    private void assertLive(String column, String party, int expected) {
        Long all = db.sql("SELECT count(*) AS n FROM lease WHERE " + column + " = CAST(:p AS UUID)")
                .bind("p", party)
                .map((r, m) -> r.get("n", Long.class))
                .one()
                .block(Duration.ofSeconds(10));
        assertThat(all).as("leases written for " + party).isEqualTo(expected);
    }

    private Mono<Map<String, Object>> single(Engine target, long[] chain) {
        return client.post()
                .uri("/api/v1/donor-selections")
                .header("Authorization", "Bearer " + s.router)
                .contentType(MediaType.APPLICATION_JSON)
                .bodyValue(request(target, chain))
                .retrieve()
                .bodyToMono(JSON);
    }

    @SuppressWarnings("unchecked")
    private Mono<List<Map<String, Object>>> batch(Engine target, long[] chain, int n) {
        List<Map<String, Object>> selections = java.util.stream.IntStream.range(0, n)
                .mapToObj(i -> request(target, chain))
                .toList();
        return client.post()
                .uri("/api/v1/donor-selections/batch")
                .header("Authorization", "Bearer " + s.router)
                .contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("selections", selections))
                .retrieve()
                .bodyToMono(JSON)
                .map(body -> (List<Map<String, Object>>) body.get("results"));
    }

    private static Map<String, Object> request(Engine target, long[] chain) {
        return Map.of(
                "requestId",
                "req-" + UUID.randomUUID(),
                "targetIncarnationId",
                target.id(),
                "seqHashes",
                Arrays.stream(chain).mapToObj(Long::toUnsignedString).toList(),
                "localPrefixBlocks",
                0,
                "deadlineMs",
                10_000);
    }
}
