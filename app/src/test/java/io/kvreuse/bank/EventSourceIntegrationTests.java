package io.kvreuse.bank;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.security.Role;
import io.kvreuse.support.Fleet;
import io.kvreuse.support.Fleet.Engine;
import io.kvreuse.support.IntegrationTest;
import io.kvreuse.support.TestTokens;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.http.MediaType;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.test.web.reactive.server.WebTestClient;

/** A bank's event source: set at creation or later, validated, persisted, read by the host's agent. */
@IntegrationTest
class EventSourceIntegrationTests {

    private static final ParameterizedTypeReference<List<Map<String, Object>>> LIST =
            new ParameterizedTypeReference<>() {};

    @Autowired
    WebTestClient http;

    @Autowired
    TestTokens tokens;

    @Autowired
    DatabaseClient db;

    Fleet fleet;
    String host;
    Engine decode;
    String agentToken;

    @BeforeEach
    void fleet() {
        fleet = new Fleet(http, tokens);
        host = Fleet.host();
        decode = fleet.ready("DECODE", fleet.domain(2, "GPU_CUDA_IPC"), 2, host);
        agentToken = tokens.mint(Role.AGENT, "agent-" + host, host);
    }

    static Map<String, Object> source(String format, String clear, String... endpoints) {
        List<Map<String, Object>> ranks = new ArrayList<>();
        for (int r = 0; r < endpoints.length; r++) {
            Map<String, Object> s = new LinkedHashMap<>();
            s.put("rank", r);
            s.put("endpoint", endpoints[r]);
            s.put("replayEndpoint", endpoints[r].replaceAll(":(\\d+)$", ":1$1"));
            s.put("topic", "kv");
            ranks.add(s);
        }
        return Map.of("format", format, "allBlocksCleared", clear, "ranks", ranks);
    }

    @Test
    void aSourceNamedAtCreationIsWhatTheHostsAgentReads() {
        Map<String, Object> body = Map.of(
                "capacityBlocks",
                64,
                "parts",
                List.of(
                        Map.of("rank", 0, "regionRef", "shm://es-" + decode.id() + "-0", "bytesPerBlock", 1048576),
                        Map.of("rank", 1, "regionRef", "shm://es-" + decode.id() + "-1", "bytesPerBlock", 1048576)),
                "eventSource",
                source("VLLM_KV_EVENTS", "BANK_RESET", "tcp://127.0.0.1:5557", "tcp://127.0.0.1:5558"));
        String bankId = (String) fleet.post("/api/v1/incarnations/" + decode.id() + "/banks", decode.token(), body, 201)
                .get("bankId");

        List<Map<String, Object>> sources = agentSources(agentToken, host, 200);
        assertThat(sources).hasSize(1);
        Map<String, Object> s = sources.getFirst();
        assertThat(s)
                .containsEntry("bankId", bankId)
                .containsEntry("format", "VLLM_KV_EVENTS")
                .containsEntry("allBlocksCleared", "BANK_RESET")
                .containsEntry("revision", 1);
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> streams = (List<Map<String, Object>>) s.get("streams");
        assertThat(streams)
                .extracting(m -> m.get("endpoint"))
                .containsExactly("tcp://127.0.0.1:5557", "tcp://127.0.0.1:5558");
        assertThat(streams.getFirst())
                .containsEntry("replayEndpoint", "tcp://127.0.0.1:15557")
                .containsEntry("topic", "kv")
                .containsEntry("eventsStarted", false)
                .doesNotContainKey("sourceSequence");

        // a host nobody registered is unknown, and another host's agent may not read this host's list
        String other = Fleet.host();
        agentSourcesRaw(tokens.mint(Role.AGENT, "agent-" + other, other), other)
                .expectStatus()
                .isNotFound()
                .expectBody()
                .jsonPath("$.type")
                .isEqualTo("https://kvreuse.io/problems/no-such-agent");
        agentSourcesRaw(tokens.mint(Role.AGENT, "agent-" + other, other), host)
                .expectStatus()
                .isForbidden();
    }

    @Test
    void aSourceSetLaterReplacesTheOldOneAndRaisesTheRevision() {
        String bankId = fleet.bank(decode, 2, 64);
        assertThat(agentSources(agentToken, host, 200)).isEmpty();
        put(bankId, source("VLLM_KV_EVENTS", "NATIVE_CACHE_CLEARED", "tcp://engine-a:5557", "tcp://engine-a:5558"))
                .expectStatus()
                .isOk();
        put(bankId, source("MOONCAKE_RFC1527", "BANK_RESET", "tcp://engine-b:6000", "ipc:///tmp/kv-rank1"))
                .expectStatus()
                .isOk()
                .expectBody()
                .jsonPath("$.revision")
                .isEqualTo(2)
                .jsonPath("$.format")
                .isEqualTo("MOONCAKE_RFC1527")
                .jsonPath("$.streams[1].endpoint")
                .isEqualTo("ipc:///tmp/kv-rank1")
                .jsonPath("$.streams.length()")
                .isEqualTo(2);
        assertThat(fleet.get("/api/v1/banks/" + bankId + "/event-source", decode.token()))
                .containsEntry("allBlocksCleared", "BANK_RESET");
        assertThat(audit(bankId)).contains("EVENT_SOURCE_SET");
    }

    @Test
    void invalidSourcesAreProblemsThatChangeNothing() {
        String bankId = fleet.bank(decode, 2, 64);
        put(bankId, source("VLLM_KV_EVENTS", "BANK_RESET", "tcp://127.0.0.1:5557", "tcp://127.0.0.1:5558"))
                .expectStatus()
                .isOk();
        expectProblem(
                put(bankId, source("VLLM_KV_EVENTS", "BANK_RESET", "tcp://*:5557", "tcp://127.0.0.1:5558")),
                400,
                "invalid-event-endpoint");
        expectProblem(
                put(bankId, source("VLLM_KV_EVENTS", "BANK_RESET", "tcp://a:70000", "tcp://127.0.0.1:5558")),
                400,
                "invalid-event-endpoint");
        // host names no resolver can look up: the agent's connect would fail at every start
        for (String host : List.of("a..b", "engine-", "x.-y", "k".repeat(64) + ".example", "a.".repeat(127) + "ab")) {
            expectProblem(
                    put(
                            bankId,
                            source("VLLM_KV_EVENTS", "BANK_RESET", "tcp://" + host + ":5557", "tcp://127.0.0.1:5558")),
                    400,
                    "invalid-event-endpoint");
        }
        expectProblem(put(bankId, source("VLLM_KV_EVENTS", "BANK_RESET", "tcp://a:1")), 400, "event-source-ranks");
        expectProblem(
                put(bankId, source("VLLM_KV_EVENTS", "BANK_RESET", "tcp://a:1", "tcp://a:2", "tcp://a:3")),
                400,
                "event-source-ranks");
        expectProblem(
                put(bankId, source("ZMQ_JSON", "BANK_RESET", "tcp://a:1", "tcp://a:2")), 400, "malformed-request");
        Map<String, Object> noPolicy =
                new LinkedHashMap<>(source("VLLM_KV_EVENTS", "BANK_RESET", "tcp://a:1", "tcp://a:2"));
        noPolicy.remove("allBlocksCleared");
        expectProblem(put(bankId, noPolicy), 400, "invalid-request");
        // another engine's token does not see the bank
        Engine stranger = fleet.ready("DECODE", fleet.domain(2, "GPU_CUDA_IPC"), 2, Fleet.host());
        expectProblem(
                http.put()
                        .uri("/api/v1/banks/" + bankId + "/event-source")
                        .header("Authorization", "Bearer " + stranger.token())
                        .contentType(MediaType.APPLICATION_JSON)
                        .bodyValue(source("VLLM_KV_EVENTS", "BANK_RESET", "tcp://x:1", "tcp://x:2"))
                        .exchange(),
                404,
                "bank-not-found");

        Map<String, Object> stored = fleet.get("/api/v1/banks/" + bankId + "/event-source", decode.token());
        assertThat(stored).containsEntry("revision", 1).containsEntry("format", "VLLM_KV_EVENTS");
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> streams = (List<Map<String, Object>>) stored.get("streams");
        assertThat(streams)
                .extracting(m -> m.get("endpoint"))
                .containsExactly("tcp://127.0.0.1:5557", "tcp://127.0.0.1:5558");
    }

    @Test
    void anInvalidSourceAtCreationCreatesNoBank() {
        Map<String, Object> body = Map.of(
                "capacityBlocks",
                64,
                "parts",
                List.of(
                        Map.of("rank", 0, "regionRef", "shm://bad-" + decode.id() + "-0", "bytesPerBlock", 1048576),
                        Map.of("rank", 1, "regionRef", "shm://bad-" + decode.id() + "-1", "bytesPerBlock", 1048576)),
                "eventSource",
                source("VLLM_KV_EVENTS", "BANK_RESET", "tcp://127.0.0.1:5557", "tcp://*:5558"));
        expectProblem(
                fleet.postRaw("/api/v1/incarnations/" + decode.id() + "/banks", decode.token(), body),
                400,
                "invalid-event-endpoint");
        long banks = db.sql("SELECT count(*) AS n FROM retained_bank WHERE incarnation_id = :i")
                .bind("i", UUID.fromString(decode.id()))
                .map((row, meta) -> row.get("n", Long.class))
                .one()
                .block(Duration.ofSeconds(5));
        assertThat(banks).isZero();
    }

    @Test
    void aStreamBreakReportedByTheAgentUnpublishesUntilASnapshot() {
        String bankId = fleet.bank(decode, 2, 64);
        put(bankId, source("VLLM_KV_EVENTS", "BANK_RESET", "tcp://127.0.0.1:5557", "tcp://127.0.0.1:5558"))
                .expectStatus()
                .isOk();
        assertThat(fleet.get("/api/v1/banks/" + bankId, decode.token())).containsEntry("state", "PUBLISHED");
        Map<String, Object> after = fleet.post(
                "/api/v1/banks/" + bankId + "/parts/1/stream-breaks",
                agentToken,
                Map.of("kind", "RESTART", "expectedSequence", 12, "receivedSequence", 0),
                200);
        assertThat(after).containsEntry("state", "UNPUBLISHED");
        assertThat(audit(bankId)).contains("ENGINE_RESTART");
        @SuppressWarnings("unchecked")
        Map<String, Object> stream = ((List<Map<String, Object>>)
                        agentSources(agentToken, host, 200).getFirst().get("streams"))
                .get(1);
        assertThat(stream).containsEntry("needsSnapshot", true);

        // an agent of another host may not break this bank's streams
        String other = Fleet.host();
        expectProblem(
                fleet.postRaw(
                        "/api/v1/banks/" + bankId + "/parts/0/stream-breaks",
                        tokens.mint(Role.AGENT, "agent-" + other, other),
                        Map.of("kind", "GAP", "expectedSequence", 3, "receivedSequence", 9)),
                404,
                "bank-not-found");

        http.put()
                .uri("/api/v1/banks/" + bankId + "/parts/1/snapshot")
                .header("Authorization", "Bearer " + decode.token())
                .contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("throughEventId", 0, "blocks", List.of(), "sourceSequence", 4))
                .exchange()
                .expectStatus()
                .isOk();
        assertThat(fleet.get("/api/v1/banks/" + bankId, decode.token())).containsEntry("state", "PUBLISHED");
    }

    @Test
    void aGapTheReplayFilledIsAuditedOnceAndChangesNothingElse() throws Exception {
        String bankId = fleet.bank(decode, 2, 64);
        put(bankId, source("VLLM_KV_EVENTS", "BANK_RESET", "tcp://127.0.0.1:5557", "tcp://127.0.0.1:5558"))
                .expectStatus()
                .isOk();
        Map<String, Object> report = Map.of("kind", "REPLAYED", "expectedSequence", 7, "receivedSequence", 10);
        // the same report from eight concurrent requests (an agent retrying calls whose answers it lost)
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            List<Future<Map<String, Object>>> answers = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                answers.add(pool.submit(() ->
                        fleet.post("/api/v1/banks/" + bankId + "/parts/1/stream-breaks", agentToken, report, 200)));
            }
            for (Future<Map<String, Object>> answer : answers) {
                assertThat(answer.get(30, TimeUnit.SECONDS)).containsEntry("state", "PUBLISHED");
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(audit(bankId)).filteredOn("EVENT_GAP_REPLAYED"::equals).hasSize(1);
        assertThat(replayedDetail(bankId)).containsExactly("rank 1: 7..10");
        @SuppressWarnings("unchecked")
        Map<String, Object> stream = ((List<Map<String, Object>>)
                        agentSources(agentToken, host, 200).getFirst().get("streams"))
                .get(1);
        assertThat(stream).containsEntry("needsSnapshot", false);

        // a later gap is a new entry; the owner engine may report one too
        fleet.post(
                "/api/v1/banks/" + bankId + "/parts/1/stream-breaks",
                decode.token(),
                Map.of("kind", "REPLAYED", "expectedSequence", 11, "receivedSequence", 12),
                200);
        assertThat(audit(bankId)).filteredOn("EVENT_GAP_REPLAYED"::equals).hasSize(2);
        assertThat(fleet.get("/api/v1/banks/" + bankId, decode.token())).containsEntry("state", "PUBLISHED");
    }

    @Test
    void aReplayedGapThatIsNoGapIsAProblemThatRecordsNothing() {
        String bankId = fleet.bank(decode, 2, 64);
        put(bankId, source("VLLM_KV_EVENTS", "BANK_RESET", "tcp://127.0.0.1:5557", "tcp://127.0.0.1:5558"))
                .expectStatus()
                .isOk();
        for (Map<String, Object> bad : List.of(
                Map.<String, Object>of("kind", "REPLAYED", "expectedSequence", 5, "receivedSequence", 5),
                Map.<String, Object>of("kind", "REPLAYED", "expectedSequence", 9, "receivedSequence", 3),
                Map.<String, Object>of("kind", "REPLAYED", "expectedSequence", -1, "receivedSequence", 3))) {
            expectProblem(
                    fleet.postRaw("/api/v1/banks/" + bankId + "/parts/0/stream-breaks", agentToken, bad),
                    400,
                    "invalid-request");
        }
        expectProblem(
                fleet.postRaw(
                        "/api/v1/banks/" + bankId + "/parts/5/stream-breaks",
                        agentToken,
                        Map.of("kind", "REPLAYED", "expectedSequence", 1, "receivedSequence", 3)),
                404,
                "bank-part-not-found");
        assertThat(audit(bankId)).doesNotContain("EVENT_GAP_REPLAYED");
    }

    private List<String> replayedDetail(String bankId) {
        return db.sql("""
                        SELECT 'rank ' || (detail->>'rank') || ': ' || (detail->>'expectedSequence') || '..'
                               || (detail->>'receivedSequence') AS d
                        FROM audit_event WHERE subject_id = :s AND action = 'EVENT_GAP_REPLAYED'
                        """)
                .bind("s", bankId)
                .map((row, meta) -> row.get("d", String.class))
                .all()
                .collectList()
                .block(Duration.ofSeconds(5));
    }

    private WebTestClient.ResponseSpec put(String bankId, Object body) {
        return http.put()
                .uri("/api/v1/banks/" + bankId + "/event-source")
                .header("Authorization", "Bearer " + decode.token())
                .contentType(MediaType.APPLICATION_JSON)
                .bodyValue(body)
                .exchange();
    }

    private static void expectProblem(WebTestClient.ResponseSpec response, int status, String slug) {
        response.expectStatus()
                .isEqualTo(status)
                .expectHeader()
                .contentType(MediaType.APPLICATION_PROBLEM_JSON)
                .expectBody()
                .jsonPath("$.type")
                .isEqualTo("https://kvreuse.io/problems/" + slug);
    }

    private List<Map<String, Object>> agentSources(String token, String hostId, int status) {
        return agentSourcesRaw(token, hostId)
                .expectStatus()
                .isEqualTo(status)
                .expectBody(LIST)
                .returnResult()
                .getResponseBody();
    }

    private WebTestClient.ResponseSpec agentSourcesRaw(String token, String hostId) {
        return http.get()
                .uri("/api/v1/agents/" + hostId + "/event-sources")
                .header("Authorization", "Bearer " + token)
                .exchange();
    }

    private List<String> audit(String bankId) {
        return db.sql("SELECT action FROM audit_event WHERE subject_id = :s")
                .bind("s", bankId)
                .map((row, meta) -> row.get("action", String.class))
                .all()
                .collectList()
                .block(Duration.ofSeconds(5));
    }
}
