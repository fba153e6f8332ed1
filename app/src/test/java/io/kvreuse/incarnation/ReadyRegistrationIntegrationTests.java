package io.kvreuse.incarnation;

import static io.kvreuse.incarnation.Engines.expectProblem;
import static io.kvreuse.incarnation.Engines.newHost;
import static io.kvreuse.incarnation.Engines.registration;
import static io.kvreuse.incarnation.Engines.with;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.security.Role;
import io.kvreuse.support.IntegrationTest;
import io.kvreuse.support.MutableClock;
import io.kvreuse.support.TestTokens;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
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
import org.springframework.http.MediaType;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.publisher.Flux;

/**
 * A registration that is also the first heartbeat ({@code ready}) and one that brings the decode
 * engine's retained bank along ({@code bank}), against the real database.
 */
@IntegrationTest
class ReadyRegistrationIntegrationTests {

    /** The test domains (Contracts) certify 2 MiB per block per rank. */
    private static final long BLOCK_BYTES = 2_097_152;

    @Autowired
    WebTestClient http;

    @Autowired
    TestTokens tokens;

    @Autowired
    DatabaseClient db;

    @Autowired
    Environment env;

    @Autowired
    MutableClock clock;

    @Autowired
    LivenessSweeper sweeper;

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
    void aReadyRegistrationIsReadyAtEpochTwoAuditedAsTheFirstHeartbeat() {
        String host = newHost();
        Map<String, Object> answer =
                Engines.json(engines.register(engine, with(registration(domain, host, 0, 1), "ready", true))
                        .expectStatus()
                        .isCreated());
        assertThat(answer).containsEntry("state", "READY").containsEntry("fencingEpoch", 2);
        assertThat(answer).doesNotContainKey("bankId");
        UUID id = UUID.fromString(answer.get("incarnationId").toString());
        assertThat(engines.view(engine, id)).containsEntry("state", "READY").containsEntry("fencingEpoch", 2);

        // the same audit trail as a registration followed by its first heartbeat
        UUID twin = engines.ready(engine, registration(domain, newHost(), 0, 1));
        List<String> viaHeartbeat = engines.transitions(twin);
        List<String> direct = engines.transitions(id);
        assertThat(direct).hasSize(2).isEqualTo(viaHeartbeat);
        assertThat(direct.get(1)).startsWith("REGISTERED>READY@2 by engine:engine-");
        assertThat(reasons(id)).isEqualTo(reasons(twin));

        // liveness counts from the registration: the next heartbeat at epoch 2 just records it
        assertThat(Engines.json(engines.report(engine, id, "heartbeat", 2L)
                        .expectStatus()
                        .isOk()))
                .containsEntry("state", "READY")
                .containsEntry("fencingEpoch", 2);
        assertThat(engines.transitions(id)).hasSize(2);
    }

    @Test
    void theEpochOfTheRegisteredStateIsStaleForAReadyRegistration() {
        UUID id = readyId(registration(domain, newHost(), 0, 1));
        expectProblem(engines.report(engine, id, "heartbeat", 1L), 409, "stale-epoch")
                .jsonPath("$.currentEpoch")
                .isEqualTo(2);
        expectProblem(engines.report(engine, id, "drain", 1L), 409, "stale-epoch");
        assertThat(engines.view(engine, id)).containsEntry("state", "READY").containsEntry("fencingEpoch", 2);
        assertThat(engines.transitions(id)).hasSize(2);
    }

    @Test
    void aReadyRegistrationThatNeverHeartbeatsBecomesSuspect() {
        UUID id = readyId(registration(domain, newHost(), 0, 1));
        clock.advance(Duration.ofSeconds(11));
        sweep();
        assertThat(engines.view(engine, id)).containsEntry("state", "SUSPECT").containsEntry("fencingEpoch", 3);
        // SUSPECT is not death: a heartbeat at the current epoch brings it back
        assertThat(Engines.json(engines.report(engine, id, "heartbeat", 3L)
                        .expectStatus()
                        .isOk()))
                .containsEntry("state", "READY")
                .containsEntry("fencingEpoch", 4);
    }

    @Test
    void withoutReadyARegistrationIsRegisteredAsBefore() {
        for (Object ready : new Object[] {null, false}) {
            Map<String, Object> body = registration(domain, newHost(), 0, 1);
            if (ready != null) {
                body = with(body, "ready", ready);
            }
            Map<String, Object> answer =
                    Engines.json(engines.register(engine, body).expectStatus().isCreated());
            assertThat(answer)
                    .containsEntry("state", "REGISTERED")
                    .containsEntry("fencingEpoch", 1)
                    .doesNotContainKey("bankId");
            UUID id = UUID.fromString(answer.get("incarnationId").toString());
            assertThat(engines.transitions(id)).singleElement().asString().startsWith("null>REGISTERED@1 ");
            assertThat(engines.view(engine, id)).containsEntry("state", "REGISTERED");
        }
        expectProblem(
                engines.register(engine, with(registration(domain, newHost(), 0, 1), "ready", "soon")),
                400,
                "malformed-request");
    }

    @Test
    void aRegistrationWithItsBankAnswersTheBankWhichPublishesWhenReady() {
        String host = newHost();
        Map<String, Object> answer =
                Engines.json(engines.register(engine, with(readyBody(host), "bank", bank(64, true, true)))
                        .expectStatus()
                        .isCreated());
        assertThat(answer).containsEntry("state", "READY").containsEntry("fencingEpoch", 2);
        UUID id = UUID.fromString(answer.get("incarnationId").toString());
        String bankId = (String) answer.get("bankId");
        assertThat(bankId).isNotNull();

        Map<String, Object> view = bankView(bankId);
        assertThat(view)
                .containsEntry("incarnationId", id.toString())
                .containsEntry("state", "PUBLISHED")
                .containsEntry("capacityBlocks", 64)
                .containsEntry("bankEpoch", 1);
        assertThat(partsReady(view)).containsExactly(true, true);

        // its inventory events make blocks eligible, and the bank stays published
        for (int rank = 0; rank < 2; rank++) {
            post(
                            "/api/v1/banks/" + bankId + "/events",
                            Map.of(
                                    "rank",
                                    rank,
                                    "firstEventId",
                                    1,
                                    "events",
                                    List.of(Map.of(
                                            "type",
                                            "STORED",
                                            "blocks",
                                            List.of(
                                                    Map.of("seqHash", "11", "position", 0, "slot", 0),
                                                    Map.of(
                                                            "seqHash",
                                                            "12",
                                                            "parentHash",
                                                            "11",
                                                            "position",
                                                            1,
                                                            "slot",
                                                            1))))))
                    .expectStatus()
                    .isOk();
        }
        assertThat(bankView(bankId)).containsEntry("state", "PUBLISHED").containsEntry("eligibleBlocks", 2);
        assertThat(engines.count(
                        "SELECT count(*) FROM audit_event WHERE subject_id = :b AND action = 'BANK_CREATED'",
                        "b",
                        bankId))
                .isOne();
    }

    @Test
    void aBankBroughtAlongFollowsThePublicationRulesOfTheBank() {
        // parts not ready: pending, as with the bank endpoint
        Map<String, Object> pending =
                Engines.json(engines.register(engine, with(readyBody(newHost()), "bank", bank(16, false, false)))
                        .expectStatus()
                        .isCreated());
        assertThat(bankView((String) pending.get("bankId")))
                .containsEntry("state", "PENDING")
                .doesNotContainKey("unpublishedReason");

        // one part of two ready: still pending
        Map<String, Object> half =
                Engines.json(engines.register(engine, with(readyBody(newHost()), "bank", bank(16, true, false)))
                        .expectStatus()
                        .isCreated());
        assertThat(bankView((String) half.get("bankId"))).containsEntry("state", "PENDING");

        // every part ready, owner only registered: unpublished until its first heartbeat
        Map<String, Object> registered = Engines.json(
                engines.register(engine, with(registration(domain, newHost(), 0, 1), "bank", bank(16, true, true)))
                        .expectStatus()
                        .isCreated());
        assertThat(registered).containsEntry("state", "REGISTERED").containsEntry("fencingEpoch", 1);
        String bankId = (String) registered.get("bankId");
        assertThat(bankView(bankId))
                .containsEntry("state", "UNPUBLISHED")
                .containsEntry("unpublishedReason", "OWNER_NOT_READY");
        engines.ok(engine, UUID.fromString(registered.get("incarnationId").toString()), "heartbeat");
        awaitBankState(bankId, "PUBLISHED");
    }

    @Test
    void thePlainBankEndpointTakesReadyPartsToo() {
        UUID id = readyId(readyBody(newHost()));
        Map<String, Object> created = Engines.json(post("/api/v1/incarnations/" + id + "/banks", bank(16, true, true))
                .expectStatus()
                .isCreated());
        assertThat(created).containsEntry("state", "PUBLISHED");
        assertThat(partsReady(created)).containsExactly(true, true);
        // the part ready call after it changes nothing
        assertThat(Engines.json(post("/api/v1/banks/" + created.get("bankId") + "/parts/0/ready", Map.of())
                        .expectStatus()
                        .isOk()))
                .containsEntry("state", "PUBLISHED");

        UUID other = readyId(readyBody(newHost()));
        Map<String, Object> plainBody = bank(16, null, null);
        Map<String, Object> plain = Engines.json(post("/api/v1/incarnations/" + other + "/banks", plainBody)
                .expectStatus()
                .isCreated());
        assertThat(plain).containsEntry("state", "PENDING");
        assertThat(partsReady(plain)).containsExactly(false, false);

        // the identical create repeated with its parts ready readies them, as their ready calls would
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> parts = ((List<Map<String, Object>>) plainBody.get("parts"))
                .stream().map(p -> with(p, "ready", true)).toList();
        Map<String, Object> repeated =
                Engines.json(post("/api/v1/incarnations/" + other + "/banks", with(plainBody, "parts", parts))
                        .expectStatus()
                        .isOk());
        assertThat(repeated).containsEntry("bankId", plain.get("bankId")).containsEntry("state", "PUBLISHED");
        assertThat(partsReady(repeated)).containsExactly(true, true);
    }

    @Test
    void badBankInputRefusesTheWholeRegistrationWithTheBankEndpointsProblem() {
        // the answers of the bank endpoint itself, for an incarnation that exists
        UUID existing = readyId(readyBody(newHost()));
        Map<String, Object> wrongBytes = bank(16, true, true);
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> parts = new ArrayList<>((List<Map<String, Object>>) wrongBytes.get("parts"));
        parts.set(1, with(parts.get(1), "bytesPerBlock", 4096));
        wrongBytes = with(wrongBytes, "parts", parts);
        Map<String, Object> oneRank = with(bank(16, true, true), "parts", List.of(parts.getFirst()));
        Map<String, Object> invalid = with(bank(16, true, true), "capacityBlocks", 0);
        Map<String, Object> badRegion = with(
                bank(16, true, true), "parts", List.of(with(parts.getFirst(), "regionRef", "nowhere"), parts.get(1)));

        for (Map<String, Object> bad : List.of(wrongBytes, oneRank, invalid, badRegion)) {
            Map<String, Object> byEndpoint = Engines.json(post("/api/v1/incarnations/" + existing + "/banks", bad)
                    .expectStatus()
                    .is4xxClientError());
            String host = newHost();
            String name = "pod-" + UUID.randomUUID();
            Map<String, Object> body = with(with(readyBody(host), "stableName", name), "bank", bad);
            Map<String, Object> byRegistration = Engines.json(
                    engines.register(engine, body).expectStatus().isEqualTo((Integer) byEndpoint.get("status")));
            assertThat(byRegistration.get("type")).as(bad.toString()).isEqualTo(byEndpoint.get("type"));
            assertThat(byRegistration.get("title")).isEqualTo(byEndpoint.get("title"));
            assertThat(byRegistration.get("expectedBytesPerBlock")).isEqualTo(byEndpoint.get("expectedBytesPerBlock"));
            assertThat(byRegistration).doesNotContainKeys("incarnationId", "bankId");

            // nothing was written: no incarnation, no bank, no audit, and the name and GPUs are free
            assertThat(engines.incarnationsOnHost(host)).isZero();
            assertThat(engines.count(
                            "SELECT count(*) FROM retained_bank b JOIN engine_incarnation i USING (incarnation_id)"
                                    + " WHERE i.host_id = :h",
                            "h",
                            host))
                    .isZero();
            assertThat(engines.count(
                            "SELECT count(*) FROM audit_event WHERE detail::text LIKE :n", "n", "%" + name + "%"))
                    .isZero();
            Map<String, Object> retried =
                    Engines.json(engines.register(engine, with(body, "bank", bank(16, true, true)))
                            .expectStatus()
                            .isCreated());
            assertThat(retried).containsEntry("state", "READY").containsKey("bankId");
        }
        assertThat(engines.count("SELECT count(*) FROM retained_bank WHERE incarnation_id = :i", "i", existing))
                .isZero();
    }

    @Test
    void aPrefillEngineBringsNoBank() {
        String host = newHost();
        Map<String, Object> body = with(with(readyBody(host), "role", "PREFILL"), "bank", bank(16, true, true));
        expectProblem(engines.register(engine, body), 422, "not-a-decode-incarnation");
        assertThat(engines.incarnationsOnHost(host)).isZero();
    }

    @Test
    void concurrentReadyRegistrationsWithBanksForOneStableNameThenExactlyOneWins() {
        String name = "pod-" + UUID.randomUUID();
        List<Integer> statuses = new CopyOnWriteArrayList<>();
        Set<String> slugs = ConcurrentHashMap.newKeySet();
        WebClient client = WebClient.create("http://localhost:" + env.getProperty("local.server.port"));
        Flux.range(0, 10)
                .flatMap(
                        i -> client.post()
                                .uri("/api/v1/incarnations")
                                .header("Authorization", "Bearer " + engine)
                                .bodyValue(with(
                                        with(readyBody(newHost()), "stableName", name), "bank", bank(16, true, true)))
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
        assertThat(engines.count(
                        "SELECT count(*) FROM retained_bank b JOIN engine_incarnation i USING (incarnation_id)"
                                + " WHERE i.stable_name = :n",
                        "n",
                        name))
                .isOne();
    }

    @Test
    void aReplayedReadyRegistrationAnswersTheFirstAnswerWithItsBank() {
        Map<String, Object> body = with(readyBody(newHost()), "bank", bank(16, true, true));
        String key = "reg-" + UUID.randomUUID();
        Map<String, Object> first =
                Engines.json(withKey(key, body).expectStatus().isCreated());
        Map<String, Object> again = Engines.json(withKey(key, body)
                .expectStatus()
                .isCreated()
                .expectHeader()
                .valueEquals("Idempotent-Replayed", "true"));
        assertThat(again).isEqualTo(first).containsEntry("state", "READY").containsKey("bankId");
        assertThat(engines.count(
                        "SELECT count(*) FROM retained_bank WHERE incarnation_id = :i",
                        "i",
                        UUID.fromString(first.get("incarnationId").toString())))
                .isOne();
    }

    private static List<Object> partsReady(Map<String, Object> bank) {
        return ((List<?>) bank.get("parts"))
                .stream().map(p -> (Object) ((Map<?, ?>) p).get("ready")).toList();
    }

    private Map<String, Object> readyBody(String host) {
        return with(registration(domain, host, 0, 1), "ready", true);
    }

    private UUID readyId(Map<String, Object> body) {
        Map<String, Object> answer = Engines.json(engines.register(engine, with(body, "ready", true))
                .expectStatus()
                .isCreated());
        assertThat(answer).containsEntry("state", "READY");
        return UUID.fromString(answer.get("incarnationId").toString());
    }

    /** A two-part bank body; a part's {@code ready} is left out when null. */
    private static Map<String, Object> bank(int capacity, Boolean ready0, Boolean ready1) {
        List<Map<String, Object>> parts = new ArrayList<>();
        Boolean[] ready = {ready0, ready1};
        for (int r = 0; r < 2; r++) {
            Map<String, Object> part = new LinkedHashMap<>();
            part.put("rank", r);
            part.put("regionRef", "shm://bank-" + UUID.randomUUID() + "-" + r);
            part.put("bytesPerBlock", BLOCK_BYTES);
            if (ready[r] != null) {
                part.put("ready", ready[r]);
            }
            parts.add(part);
        }
        return Map.of("capacityBlocks", capacity, "parts", parts);
    }

    private WebTestClient.ResponseSpec post(String path, Object body) {
        return http.post()
                .uri(path)
                .header("Authorization", "Bearer " + engine)
                .contentType(MediaType.APPLICATION_JSON)
                .bodyValue(body)
                .exchange();
    }

    private WebTestClient.ResponseSpec withKey(String key, Map<String, Object> body) {
        return http.post()
                .uri("/api/v1/incarnations")
                .header("Authorization", "Bearer " + engine)
                .header("Idempotency-Key", key)
                .contentType(MediaType.APPLICATION_JSON)
                .bodyValue(body)
                .exchange();
    }

    private Map<String, Object> bankView(String bankId) {
        return Engines.json(http.get()
                .uri("/api/v1/banks/{id}", bankId)
                .header("Authorization", "Bearer " + engine)
                .exchange()
                .expectStatus()
                .isOk());
    }

    private void awaitBankState(String bankId, String state) {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (!state.equals(bankView(bankId).get("state"))) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("bank " + bankId + " not " + state + ": " + bankView(bankId));
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
    }

    private List<String> reasons(UUID id) {
        return db.sql(
                        "SELECT coalesce(reason, '-') AS reason FROM audit_event WHERE subject_id = :id ORDER BY event_id")
                .bind("id", id.toString())
                .map((row, meta) -> row.get("reason", String.class))
                .all()
                .collectList()
                .block();
    }

    private void sweep() {
        for (int attempt = 0; attempt < 100; attempt++) {
            if (sweeper.sweepOnce().block(Duration.ofSeconds(30)).ran()) {
                return;
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
        throw new AssertionError("the sweeper never ran");
    }
}
