package io.kvreuse.incarnation;

import static io.kvreuse.incarnation.Engines.expectProblem;
import static io.kvreuse.incarnation.Engines.newHost;
import static io.kvreuse.incarnation.Engines.registration;
import static io.kvreuse.incarnation.Engines.with;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.security.Role;
import io.kvreuse.support.IntegrationTest;
import io.kvreuse.support.TestTokens;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.test.web.reactive.server.WebTestClient;

@IntegrationTest
class IncarnationLifecycleIntegrationTests {

    @Autowired
    WebTestClient http;

    @Autowired
    TestTokens tokens;

    @Autowired
    DatabaseClient db;

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
    void cleanLifeBumpsTheEpochOnEveryTransitionAndAuditsIt() {
        String host = newHost();
        UUID id = engines.ready(engine, registration(domain, host, 0, 1));
        assertThat(engines.ok(engine, id, "heartbeat"))
                .containsEntry("state", "READY")
                .containsEntry("fencingEpoch", 2);
        assertThat(engines.ok(engine, id, "drain"))
                .containsEntry("state", "DRAINING")
                .containsEntry("fencingEpoch", 3);
        assertThat(engines.ok(engine, id, "heartbeat"))
                .containsEntry("state", "DRAINING")
                .containsEntry("fencingEpoch", 3);
        assertThat(engines.ok(engine, id, "exit"))
                .containsEntry("state", "EXITED")
                .containsEntry("fencingEpoch", 4);
        String actor = "engine:" + engines.view(engine, id).get("ownerSubject");
        assertThat(engines.transitions(id))
                .containsExactly(
                        "null>REGISTERED@1 by " + actor,
                        "REGISTERED>READY@2 by " + actor,
                        "READY>DRAINING@3 by " + actor,
                        "DRAINING>EXITED@4 by " + actor);
        assertThat(engines.count("SELECT count(*) FROM incarnation_rank WHERE incarnation_id = :id AND live", "id", id))
                .isZero();
    }

    @Test
    void repeatedDrainAndExitAnswerAsIsWithoutNewTransitions() {
        UUID id = engines.ready(engine, registration(domain, newHost(), 0, 1));
        engines.ok(engine, id, "drain");
        assertThat(engines.ok(engine, id, "drain"))
                .containsEntry("state", "DRAINING")
                .containsEntry("fencingEpoch", 3);
        engines.ok(engine, id, "exit");
        assertThat(engines.ok(engine, id, "exit"))
                .containsEntry("state", "EXITED")
                .containsEntry("fencingEpoch", 4);
        assertThat(engines.transitions(id)).hasSize(4);
    }

    @Test
    void illegalTransitionsThenConflictWithCurrentStateAndNothingChanges() {
        UUID id = engines.registered(engine, registration(domain, newHost(), 0, 1));
        expectProblem(engines.report(engine, id, "drain", null), 409, "illegal-transition")
                .jsonPath("$.currentState")
                .isEqualTo("REGISTERED");
        engines.ok(engine, id, "exit");
        expectProblem(engines.report(engine, id, "heartbeat", null), 409, "illegal-transition")
                .jsonPath("$.currentState")
                .isEqualTo("EXITED");
        expectProblem(engines.report(engine, id, "drain", null), 409, "illegal-transition");
        assertThat(engines.view(engine, id)).containsEntry("state", "EXITED").containsEntry("fencingEpoch", 2);
    }

    @Test
    void reportWithStaleEpochThenConflictWithCurrentEpoch() {
        UUID id = engines.ready(engine, registration(domain, newHost(), 0, 1));
        expectProblem(engines.report(engine, id, "heartbeat", 1L), 409, "stale-epoch")
                .jsonPath("$.currentEpoch")
                .isEqualTo(2)
                .jsonPath("$.presentedEpoch")
                .isEqualTo(1);
        expectProblem(engines.report(engine, id, "drain", 1L), 409, "stale-epoch");
        expectProblem(engines.report(engine, id, "exit", 7L), 409, "stale-epoch");
        assertThat(engines.view(engine, id)).containsEntry("state", "READY").containsEntry("fencingEpoch", 2);
        engines.report(engine, id, "heartbeat", 2L).expectStatus().isOk();
        engines.report(engine, id, "drain", 2L)
                .expectBody()
                .jsonPath("$.fencingEpoch")
                .isEqualTo(3);
    }

    @Test
    void heartbeatWithStaleOrAheadEpochInBodyThenConflictAndNothingChanges() {
        UUID id = engines.ready(engine, registration(domain, newHost(), 0, 1));
        Object lastBeat = engines.view(engine, id).get("lastHeartbeatAt");
        expectProblem(heartbeatWithBody(id, "{\"fencingEpoch\":3}"), 409, "stale-epoch")
                .jsonPath("$.currentEpoch")
                .isEqualTo(2)
                .jsonPath("$.presentedEpoch")
                .isEqualTo(3);
        expectProblem(heartbeatWithBody(id, "{\"fencingEpoch\":1}"), 409, "stale-epoch");
        assertThat(engines.view(engine, id))
                .containsEntry("state", "READY")
                .containsEntry("fencingEpoch", 2)
                .containsEntry("lastHeartbeatAt", lastBeat);
        assertThat(Engines.json(heartbeatWithBody(id, "{\"fencingEpoch\":2}")
                        .expectStatus()
                        .isOk()))
                .containsEntry("state", "READY")
                .containsEntry("fencingEpoch", 2);
    }

    @Test
    void heartbeatWithImpossibleEpochThenBadRequestAndNothingChanges() {
        UUID id = engines.registered(engine, registration(domain, newHost(), 0, 1));
        expectProblem(heartbeatWithBody(id, "{\"fencingEpoch\":-1}"), 400, "invalid-request");
        expectProblem(heartbeatWithBody(id, "{\"fencingEpoch\":0}"), 400, "invalid-request");
        expectProblem(heartbeatWithBody(id, "{\"fencingEpoch\":18446744073709551616}"), 400, "malformed-request");
        expectProblem(engines.report(engine, id, "heartbeat", -1L), 400, "invalid-parameter");
        expectProblem(
                http.post()
                        .uri("/api/v1/incarnations/{id}/heartbeat", id)
                        .header("Authorization", "Bearer " + engine)
                        .header("X-Fencing-Epoch", "18446744073709551616")
                        .exchange(),
                400,
                "invalid-parameter");
        expectProblem(
                http.post()
                        .uri("/api/v1/incarnations/{id}/heartbeat", id)
                        .header("Authorization", "Bearer " + engine)
                        .header("X-Fencing-Epoch", "1")
                        .contentType(org.springframework.http.MediaType.APPLICATION_JSON)
                        .bodyValue("{\"fencingEpoch\":2}")
                        .exchange(),
                400,
                "invalid-request");
        // none of them counted as a heartbeat: the incarnation never became READY
        assertThat(engines.view(engine, id))
                .containsEntry("state", "REGISTERED")
                .containsEntry("fencingEpoch", 1);
    }

    private WebTestClient.ResponseSpec heartbeatWithBody(UUID id, String json) {
        return http.post()
                .uri("/api/v1/incarnations/{id}/heartbeat", id)
                .header("Authorization", "Bearer " + engine)
                .contentType(org.springframework.http.MediaType.APPLICATION_JSON)
                .bodyValue(json)
                .exchange();
    }

    @Test
    void malformedEpochOrIdThenInvalidParameter() {
        UUID id = engines.registered(engine, registration(domain, newHost(), 0, 1));
        expectProblem(
                http.post()
                        .uri("/api/v1/incarnations/{id}/heartbeat", id)
                        .header("Authorization", "Bearer " + engine)
                        .header("X-Fencing-Epoch", "soon")
                        .exchange(),
                400,
                "invalid-parameter");
        expectProblem(
                http.post()
                        .uri("/api/v1/incarnations/not-a-uuid/heartbeat")
                        .header("Authorization", "Bearer " + engine)
                        .exchange(),
                400,
                "invalid-parameter");
        assertThat(engines.view(engine, id)).containsEntry("state", "REGISTERED");
    }

    @Test
    void foreignAndUnknownIncarnationsGetTheSameAnswerInTheSameTime() {
        UUID foreign = engines.ready(tokens.mint(Role.ENGINE), registration(domain, newHost(), 0, 1));
        UUID unknown = UUID.randomUUID();
        for (String what : List.of("heartbeat", "drain", "exit")) {
            String a = problemShape(engines.report(engine, foreign, what, null), foreign);
            String b = problemShape(engines.report(engine, unknown, what, null), unknown);
            assertThat(a).isEqualTo(b).doesNotContain("ownerSubject").doesNotContain("currentState");
        }
        assertThat(problemShape(engines.get(engine, foreign), foreign))
                .isEqualTo(problemShape(engines.get(engine, unknown), unknown));

        // interleaved, so drift in the machine's load hits both alike; the median of each
        long[] foreignNanos = new long[TIMING_ROUNDS];
        long[] unknownNanos = new long[TIMING_ROUNDS];
        for (int i = 0; i < TIMING_ROUNDS + TIMING_WARMUP; i++) {
            long f = timedGet(foreign);
            long u = timedGet(unknown);
            if (i >= TIMING_WARMUP) {
                foreignNanos[i - TIMING_WARMUP] = f;
                unknownNanos[i - TIMING_WARMUP] = u;
            }
        }
        double f = median(foreignNanos) / 1e6;
        double u = median(unknownNanos) / 1e6;
        assertThat(Math.abs(f - u))
                .as("median ms, foreign %.3f vs unknown %.3f", f, u)
                .isLessThan(0.1 * Math.min(f, u));
        assertThat(engines.view(tokens.operator(), foreign)).containsEntry("state", "READY");
    }

    private static final int TIMING_ROUNDS = 400;
    private static final int TIMING_WARMUP = 100;

    private long timedGet(UUID id) {
        long start = System.nanoTime();
        http.get()
                .uri("/api/v1/incarnations/{id}", id)
                .header("Authorization", "Bearer " + engine)
                .exchange()
                .expectStatus()
                .isNotFound()
                .expectBody()
                .returnResult();
        return System.nanoTime() - start;
    }

    private static double median(long[] values) {
        long[] sorted = values.clone();
        java.util.Arrays.sort(sorted);
        return sorted[sorted.length / 2];
    }

    /** The problem document with the addressed id blanked out: what a caller learns besides the id it sent. */
    private static String problemShape(WebTestClient.ResponseSpec response, UUID id) {
        byte[] body = expectProblem(response, 404, "incarnation-not-found")
                .returnResult()
                .getResponseBodyContent();
        return new String(body, java.nio.charset.StandardCharsets.UTF_8).replace(id.toString(), "<id>");
    }

    @Test
    void stableNameRefusedWhileHolderIsLiveAndFreeAfterCleanExit() {
        String name = "pod-" + UUID.randomUUID();
        UUID holder = engines.ready(engine, with(registration(domain, newHost(), 0, 1), "stableName", name));
        String restarted = tokens.mint(Role.ENGINE);
        Map<String, Object> again = with(registration(domain, newHost(), 0, 1), "stableName", name);
        expectProblem(engines.register(restarted, again), 409, "stable-name-held")
                .jsonPath("$.holderIncarnationId")
                .isEqualTo(holder.toString())
                .jsonPath("$.holderState")
                .isEqualTo("READY");
        engines.ok(engine, holder, "exit");
        UUID successor = engines.registered(restarted, again);
        assertThat(successor).isNotEqualTo(holder);
    }

    @Test
    void enginesSeeOnlyTheirOwnIncarnationsAndOperatorsSeeAll() {
        String host = newHost();
        UUID mine = engines.registered(engine, registration(domain, host, 0, 1));
        String other = tokens.mint(Role.ENGINE);
        UUID theirs = engines.registered(other, registration(domain, host, 2, 3));

        expectProblem(engines.get(other, mine), 404, "incarnation-not-found");
        expectProblem(engines.report(other, mine, "heartbeat", null), 404, "incarnation-not-found");
        expectProblem(engines.report(other, mine, "exit", null), 404, "incarnation-not-found");
        assertThat(engines.view(engine, mine)).containsEntry("state", "REGISTERED");

        assertThat(listIds(engine, "?hostId=" + host)).containsExactly(mine);
        assertThat(listIds(other, "?hostId=" + host)).containsExactly(theirs);
        assertThat(listIds(tokens.operator(), "?hostId=" + host)).containsExactlyInAnyOrder(mine, theirs);
        assertThat(listIds(tokens.operator(), "?hostId=" + host + "&state=REGISTERED&role=DECODE&domainId=" + domain))
                .hasSize(2);
        assertThat(listIds(tokens.operator(), "?hostId=" + host + "&role=PREFILL"))
                .isEmpty();
        assertThat(engines.view(tokens.operator(), mine)).containsEntry("hostId", host);

        // an agent reads the incarnations of its own host only
        String agent = tokens.mint(Role.AGENT, host);
        assertThat(listIds(agent, "")).containsExactlyInAnyOrder(mine, theirs);
        expectProblem(engines.get(tokens.mint(Role.AGENT), mine), 404, "incarnation-not-found");

        expectProblem(engines.get(tokens.mint(Role.ROUTER), mine), 403, "forbidden");
        expectProblem(engines.report(tokens.operator(), mine, "heartbeat", null), 403, "forbidden");
        http.get()
                .uri("/api/v1/incarnations/{id}", mine)
                .exchange()
                .expectStatus()
                .isUnauthorized();
        expectProblem(
                http.get()
                        .uri("/api/v1/incarnations?state=ZOMBIE")
                        .header("Authorization", "Bearer " + tokens.operator())
                        .exchange(),
                400,
                "invalid-parameter");
    }

    private List<UUID> listIds(String token, String query) {
        return http
                .get()
                .uri("/api/v1/incarnations" + query)
                .header("Authorization", "Bearer " + token)
                .exchange()
                .expectStatus()
                .isOk()
                .expectBodyList(Map.class)
                .returnResult()
                .getResponseBody()
                .stream()
                .map(m -> UUID.fromString(m.get("incarnationId").toString()))
                .toList();
    }
}
