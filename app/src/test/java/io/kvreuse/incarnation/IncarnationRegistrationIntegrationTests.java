package io.kvreuse.incarnation;

import static io.kvreuse.incarnation.Engines.expectProblem;
import static io.kvreuse.incarnation.Engines.newHost;
import static io.kvreuse.incarnation.Engines.registration;
import static io.kvreuse.incarnation.Engines.with;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.security.Role;
import io.kvreuse.support.IntegrationTest;
import io.kvreuse.support.TestTokens;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.core.env.Environment;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.publisher.Flux;

@IntegrationTest
class IncarnationRegistrationIntegrationTests {

    @Autowired
    WebTestClient http;

    @Autowired
    TestTokens tokens;

    @Autowired
    DatabaseClient db;

    @Autowired
    Environment env;

    Engines engines;
    String engine;
    String domain;

    @BeforeEach
    void setUp() {
        engines = new Engines(http, db);
        engine = tokens.mint(Role.ENGINE);
        domain = engines.domain(tokens.operator(), 2);
    }

    @Test
    void registerThenReadWithRanksOwnerAndAudit() {
        String host = newHost();
        var spec = engines.register(
                engine, with(registration(domain, host, 4, 5), "stableName", "pod-" + UUID.randomUUID()));
        Map<String, Object> answer = Engines.json(spec.expectStatus()
                .isCreated()
                .expectHeader()
                .value("Location", l -> assertThat(l).startsWith("/api/v1/incarnations/")));
        UUID id = UUID.fromString(answer.get("incarnationId").toString());
        Map<String, Object> view = engines.view(engine, id);
        assertThat(view)
                .containsEntry("state", "REGISTERED")
                .containsEntry("fencingEpoch", 1)
                .containsEntry("domainId", domain)
                .containsEntry("hostId", host)
                .containsEntry("role", "DECODE")
                .containsEntry("capabilities", List.of("kv.fetch_gpu@1.0"));
        assertThat(view.get("ownerSubject").toString()).startsWith("engine-");
        assertThat((List<?>) view.get("ranks")).hasSize(2);
        assertThat((Map<?, ?>) ((List<?>) view.get("ranks")).get(1))
                .extracting(m -> m.get("gpuOrdinal"), m -> m.get("live"))
                .containsExactly(5, true);
        assertThat(view).containsKey("ranks");
        assertThat(engines.transitions(id))
                .singleElement()
                .asString()
                .startsWith("null>REGISTERED@1 by engine:engine-");
    }

    @Test
    void registerWhenDomainUnknownThenRefusedAndNothingStored() {
        String host = newHost();
        expectProblem(
                engines.register(engine, registration("ld-" + "0".repeat(64), host, 0, 1)), 422, "unknown-domain");
        expectProblem(engines.register(engine, registration("nonsense", host, 0, 1)), 422, "unknown-domain");
        assertThat(engines.incarnationsOnHost(host)).isZero();
    }

    @Test
    void registerWhenDomainRevokedThenRefused() {
        http.post()
                .uri("/api/v1/domains/{id}/revoke", domain)
                .header("Authorization", "Bearer " + tokens.operator())
                .bodyValue(Map.of("reason", "test"))
                .exchange()
                .expectStatus()
                .isOk();
        String host = newHost();
        expectProblem(engines.register(engine, registration(domain, host, 0, 1)), 422, "domain-revoked")
                .jsonPath("$.domainId")
                .isEqualTo(domain);
        assertThat(engines.incarnationsOnHost(host)).isZero();
    }

    @Test
    void registerWhenRanksDoNotMatchDomainTpThenRefused() {
        String host = newHost();
        expectProblem(engines.register(engine, registration(domain, host, 0)), 422, "rank-layout-mismatch")
                .jsonPath("$.expectedTpSize")
                .isEqualTo(2);
        expectProblem(engines.register(engine, registration(domain, host, 0, 1, 2)), 422, "rank-layout-mismatch");
        Map<String, Object> gap = with(
                registration(domain, host),
                "ranks",
                List.of(
                        Map.of("rank", 0, "gpuOrdinal", 0, "gpuUuid", "GPU-a"),
                        Map.of("rank", 2, "gpuOrdinal", 1, "gpuUuid", "GPU-b")));
        expectProblem(engines.register(engine, gap), 422, "rank-layout-mismatch");
        Map<String, Object> twice = with(
                registration(domain, host),
                "ranks",
                List.of(
                        Map.of("rank", 1, "gpuOrdinal", 0, "gpuUuid", "GPU-a"),
                        Map.of("rank", 1, "gpuOrdinal", 1, "gpuUuid", "GPU-b")));
        expectProblem(engines.register(engine, twice), 422, "rank-layout-mismatch");
        assertThat(engines.incarnationsOnHost(host)).isZero();
    }

    @Test
    void registerWhenTwoRanksShareAGpuThenInvalid() {
        String host = newHost();
        expectProblem(engines.register(engine, registration(domain, host, 3, 3)), 400, "duplicate-gpu");
        Map<String, Object> sameUuid = with(
                registration(domain, host),
                "ranks",
                List.of(
                        Map.of("rank", 0, "gpuOrdinal", 0, "gpuUuid", "GPU-x"),
                        Map.of("rank", 1, "gpuOrdinal", 1, "gpuUuid", "GPU-x")));
        expectProblem(engines.register(engine, sameUuid), 400, "duplicate-gpu");
        assertThat(engines.incarnationsOnHost(host)).isZero();
    }

    @Test
    void registerWhenFieldsMissingOrOutOfRangeThenInvalidRequest() {
        String host = newHost();
        Map<String, Object> body = registration(domain, host, 0, 1);
        expectProblem(engines.register(engine, with(body, "hostId", " ")), 400, "invalid-request");
        expectProblem(engines.register(engine, with(body, "ranks", List.of())), 400, "invalid-request");
        expectProblem(engines.register(engine, with(body, "controlEndpoint", "")), 400, "invalid-request");
        expectProblem(engines.register(engine, with(body, "stableName", "bad name!")), 400, "invalid-request");
        Map<String, Object> noRole = new java.util.LinkedHashMap<>(body);
        noRole.remove("role");
        expectProblem(engines.register(engine, noRole), 400, "invalid-request")
                .jsonPath("$.errors[0].field")
                .isEqualTo("role");
        Map<String, Object> negative = with(
                body,
                "ranks",
                List.of(
                        Map.of("rank", 0, "gpuOrdinal", -1, "gpuUuid", "GPU-a"),
                        Map.of("rank", 1, "gpuOrdinal", 1, "gpuUuid", "GPU-b")));
        expectProblem(engines.register(engine, negative), 400, "invalid-request");
        expectProblem(engines.register(engine, with(body, "role", "JUDGE")), 400, "malformed-request");
        expectProblem(engines.register(engine, with(body, "incarnationId", "not-a-uuid")), 400, "malformed-request");
        assertThat(engines.incarnationsOnHost(host)).isZero();
    }

    @Test
    void registerWhenControlEndpointIsNotTcpHostPortThenInvalidRequestAndNothingStored() {
        String host = newHost();
        Map<String, Object> body = registration(domain, host, 0, 1);
        List<String> refused = List.of(
                "http://169.254.169.254/latest/meta-data/",
                "tcp://169.254.169.254:80",
                "tcp://[fe80::1]:5557",
                "tcp://0.0.0.0:5557",
                "tcp://224.0.0.1:5557",
                "file:///etc/passwd",
                "gopher://evil:70/_x",
                "javascript:alert(1)",
                "TCP://host:5557",
                "tcp://host:5557\r\nX-Injected: 1",
                "tcp://host:5557\n",
                "tcp://ho\u202Est:5557",
                "tcp://user:pw@host:5557",
                "tcp://host",
                "tcp://host:0",
                "tcp://host:65536",
                "tcp://host:+80",
                "tcp://host:5557/path",
                "tcp://host:5557?q=1",
                "tcp://-host:5557",
                "tcp://ho_st:5557",
                "tcp://host..x:5557",
                "tcp://999.1.1.1:5557",
                "tcp://[::1:5557",
                "tcp://:5557",
                "tcp://h\u00f6st:5557");
        for (String endpoint : refused) {
            expectProblem(engines.register(engine, with(body, "controlEndpoint", endpoint)), 400, "invalid-request")
                    .jsonPath("$.errors[0].field")
                    .isEqualTo("controlEndpoint");
        }
        assertThat(engines.incarnationsOnHost(host)).isZero();

        for (String endpoint : List.of(
                "tcp://" + host + ":5557", "tcp://10.0.0.7:1", "tcp://[2001:db8::7]:65535", "tcp://a.b-c.example:80")) {
            UUID id = engines.registered(
                    engine, with(registration(domain, newHost(), 0, 1), "controlEndpoint", endpoint));
            assertThat(engines.view(engine, id)).containsEntry("controlEndpoint", endpoint);
            engines.ok(engine, id, "exit");
        }
    }

    @Test
    void registerWithCallerChosenIdThenTheIdIsNeverAcceptedAgain() {
        UUID chosen = UUID.randomUUID();
        UUID id = engines.registered(
                engine, with(registration(domain, newHost(), 0, 1), "incarnationId", chosen.toString()));
        assertThat(id).isEqualTo(chosen);
        engines.ok(engine, id, "exit");
        expectProblem(
                        engines.register(
                                engine,
                                with(registration(domain, newHost(), 0, 1), "incarnationId", chosen.toString())),
                        409,
                        "incarnation-id-reused")
                .jsonPath("$.incarnationId")
                .isEqualTo(chosen.toString());
    }

    @Test
    void registerWhenGpuOrdinalHeldOnHostThenConflictUntilHolderExits() {
        String host = newHost();
        UUID holder = engines.registered(engine, registration(domain, host, 0, 1));
        String other = tokens.mint(Role.ENGINE);
        expectProblem(engines.register(other, registration(domain, host, 1, 2)), 409, "gpu-ordinal-in-use")
                .jsonPath("$.hostId")
                .isEqualTo(host)
                .jsonPath("$.gpuOrdinal")
                .isEqualTo(1)
                .jsonPath("$.holderIncarnationId")
                .isEqualTo(holder.toString());
        engines.registered(other, registration(domain, newHost(), 0, 1));
        engines.ok(engine, holder, "exit");
        engines.registered(other, registration(domain, host, 1, 2));
    }

    @Test
    void twentyConcurrentRegistrationsForOneGpuThenExactlyOneWins() {
        String host = newHost();
        List<Integer> statuses = new CopyOnWriteArrayList<>();
        Set<String> slugs = ConcurrentHashMap.newKeySet();
        WebClient client = WebClient.create("http://localhost:" + env.getProperty("local.server.port"));
        Flux.range(0, 20)
                .flatMap(
                        i -> client.post()
                                .uri("/api/v1/incarnations")
                                .header("Authorization", "Bearer " + engine)
                                .bodyValue(registration(domain, host, 7, 100 + i))
                                .exchangeToMono(r -> {
                                    statuses.add(r.statusCode().value());
                                    return r.bodyToMono(Map.class);
                                })
                                .doOnNext(b -> {
                                    if (b.get("type") != null) {
                                        slugs.add(b.get("type").toString());
                                    }
                                }),
                        20)
                .blockLast(Duration.ofSeconds(60));
        assertThat(statuses).hasSize(20);
        assertThat(statuses.stream().filter(s -> s == 201)).hasSize(1);
        assertThat(statuses.stream().filter(s -> s == 409)).hasSize(19);
        assertThat(slugs).containsExactly(Engines.PROBLEMS + "gpu-ordinal-in-use");
        assertThat(engines.incarnationsOnHost(host)).isOne();
        assertThat(engines.count("SELECT count(*) FROM incarnation_rank WHERE host_id = :h AND live", "h", host))
                .isEqualTo(2);
    }

    @Test
    void concurrentRegistrationsForOneStableNameThenExactlyOneWins() {
        String name = "pod-" + UUID.randomUUID();
        List<Integer> statuses = new CopyOnWriteArrayList<>();
        Set<String> slugs = ConcurrentHashMap.newKeySet();
        WebClient client = WebClient.create("http://localhost:" + env.getProperty("local.server.port"));
        Flux.range(0, 10)
                .flatMap(
                        i -> client.post()
                                .uri("/api/v1/incarnations")
                                .header("Authorization", "Bearer " + engine)
                                .bodyValue(with(registration(domain, newHost(), 0, 1), "stableName", name))
                                .exchangeToMono(r -> {
                                    statuses.add(r.statusCode().value());
                                    return r.bodyToMono(Map.class);
                                })
                                .doOnNext(b -> {
                                    if (b.get("type") != null) {
                                        slugs.add(b.get("type").toString());
                                    }
                                }),
                        10)
                .blockLast(Duration.ofSeconds(60));
        assertThat(statuses.stream().filter(s -> s == 201)).hasSize(1);
        assertThat(statuses.stream().filter(s -> s == 409)).hasSize(9);
        assertThat(slugs).containsExactly(Engines.PROBLEMS + "stable-name-held");
        assertThat(engines.count("SELECT count(*) FROM engine_incarnation WHERE stable_name = :n", "n", name))
                .isOne();
    }

    @Test
    void registerWithSameIdempotencyKeyAndBodyThenOriginalAnswer() {
        String host = newHost();
        Map<String, Object> body = registration(domain, host, 0, 1);
        String key = "reg-" + UUID.randomUUID();
        Map<String, Object> first = Engines.json(withKey(engine, key, body)
                .expectStatus()
                .isCreated()
                .expectHeader()
                .valueEquals("Idempotent-Replayed", "false"));
        engines.ok(engine, UUID.fromString(first.get("incarnationId").toString()), "heartbeat");
        withKey(engine, key, body)
                .expectStatus()
                .isCreated()
                .expectHeader()
                .valueEquals("Idempotent-Replayed", "true")
                .expectBody(Map.class)
                .isEqualTo(first);
        expectProblem(withKey(engine, key, registration(domain, host, 2, 3)), 422, "idempotency-key-reused");
        assertThat(engines.incarnationsOnHost(host)).isOne();
        // keys are scoped per engine: another engine's identical key is its own
        String other = tokens.mint(Role.ENGINE);
        withKey(other, key, registration(domain, newHost(), 0, 1))
                .expectStatus()
                .isCreated();
        expectProblem(withKey(engine, "k".repeat(201), body), 400, "invalid-idempotency-key");
    }

    @Test
    void concurrentRetriesWithOneIdempotencyKeyThenOneIncarnation() {
        String host = newHost();
        Map<String, Object> body = registration(domain, host, 0, 1);
        String key = "reg-" + UUID.randomUUID();
        Set<Object> ids = ConcurrentHashMap.newKeySet();
        List<Integer> statuses = new CopyOnWriteArrayList<>();
        WebClient client = WebClient.create("http://localhost:" + env.getProperty("local.server.port"));
        Flux.range(0, 8)
                .flatMap(
                        i -> client.post()
                                .uri("/api/v1/incarnations")
                                .header("Authorization", "Bearer " + engine)
                                .header("Idempotency-Key", key)
                                .bodyValue(body)
                                .exchangeToMono(r -> {
                                    statuses.add(r.statusCode().value());
                                    return r.bodyToMono(Map.class);
                                })
                                .doOnNext(b -> ids.add(b.get("incarnationId"))),
                        8)
                .blockLast(Duration.ofSeconds(60));
        assertThat(statuses).hasSize(8).containsOnly(201);
        assertThat(ids).hasSize(1);
        assertThat(engines.incarnationsOnHost(host)).isOne();
    }

    @Test
    void registerNeedsAnEngineToken() {
        Map<String, Object> body = registration(domain, newHost(), 0, 1);
        http.post()
                .uri("/api/v1/incarnations")
                .bodyValue(body)
                .exchange()
                .expectStatus()
                .isUnauthorized();
        expectProblem(engines.register(tokens.mint(Role.ROUTER), body), 403, "forbidden");
        expectProblem(engines.register(tokens.operator(), body), 403, "forbidden");
        expectProblem(engines.register(tokens.mint(Role.AGENT), body), 403, "forbidden");
    }

    private WebTestClient.ResponseSpec withKey(String token, String key, Map<String, Object> body) {
        return http.post()
                .uri("/api/v1/incarnations")
                .header("Authorization", "Bearer " + token)
                .header("Idempotency-Key", key)
                .bodyValue(body)
                .exchange();
    }
}
