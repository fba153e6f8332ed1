package io.kvreuse.web;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.incarnation.LivenessSweeper;
import io.kvreuse.security.Role;
import io.kvreuse.support.ExchangeRecorder;
import io.kvreuse.support.Fleet;
import io.kvreuse.support.IntegrationTest;
import io.kvreuse.support.LeaseWorld;
import io.kvreuse.support.MutableClock;
import io.kvreuse.support.TestTokens;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * Plays every operation of the API against the running application and PostgreSQL, records what
 * the server really answered, and validates each answer (and each accepted request body) against
 * the served OpenAPI document's schema for that operation and status: an undeclared field, a wrong
 * type, a missing required field or an undeclared status fails.
 */
@IntegrationTest
class OpenApiConformanceIntegrationTests {

    @Autowired
    WebTestClient http;

    @Autowired
    TestTokens tokens;

    @Autowired
    ExchangeRecorder recorder;

    @Autowired
    MutableClock clock;

    @Autowired
    LivenessSweeper liveness;

    @Test
    void everyRecordedAnswerMatchesTheServedDocument() throws Exception {
        ServedOpenApi doc = new ServedOpenApi(document());
        recorder.start();
        List<ExchangeRecorder.Exchange> recorded;
        try {
            playEveryOperation();
        } finally {
            recorded = recorder.stop();
        }
        List<String> failures = new ArrayList<>();
        Map<String, ExchangeRecorder.Exchange> succeeded = new TreeMap<>();
        TreeSet<String> problems = new TreeSet<>();
        for (ExchangeRecorder.Exchange e : recorded) {
            var op = doc.operation(e.method(), e.path());
            if (op.isEmpty()) {
                failures.add(e.method() + " " + e.path() + ": no such operation in the document");
                continue;
            }
            String where = op.get().id() + " " + e.status() + " (" + e.method() + " " + e.path() + ")";
            for (String error : doc.checkAnswer(op.get(), e.status(), e.contentType(), e.responseBody())) {
                failures.add(where + ": " + error + " in " + abbreviate(e.responseBody()));
            }
            if (e.status() < 300 && e.requestBody() != null) {
                for (String error : doc.checkRequest(op.get(), e.requestBody())) {
                    failures.add(where + " request: " + error + " in " + abbreviate(e.requestBody()));
                }
            }
            if (e.status() < 300) {
                succeeded.putIfAbsent(op.get().id(), e);
            } else {
                problems.add(e.status() + " " + op.get().id());
            }
        }
        writeExamples(succeeded);
        assertThat(failures).as("answers that do not match the served document").isEmpty();
        assertThat(DeclaredProblems.check(doc, recorded).undeclared())
                .as("problems answered but not declared for their operation")
                .isEmpty();
        List<String> all = doc.operations.stream()
                .map(ServedOpenApi.Operation::id)
                .sorted()
                .toList();
        assertThat(succeeded.keySet()).as("operations answered with success").containsExactlyElementsOf(all);
        assertThat(problems)
                .as("typical problems recorded")
                .contains(
                        "400 selectDonor",
                        "401 listTokens",
                        "403 listTokens",
                        "404 getLease",
                        "409 heartbeatIncarnation");
    }

    private void playEveryOperation() {
        LeaseWorld w = new LeaseWorld(http, tokens, 2, 60_000, 60_000, 120_000);
        Fleet fleet = w.fleet;
        String op = tokens.operator();
        try {
            // reads of what the world set up
            fleet.get("/api/v1/domains/" + w.domain, w.target.token());
            list("/api/v1/domains", op);
            list("/api/v1/incarnations", op);
            fleet.get("/api/v1/incarnations/" + w.target.id(), w.target.token());
            fleet.get("/api/v1/banks/" + w.bankId, op);
            fleet.get("/api/v1/incarnations/" + w.target.id() + "/destination-regions", op);
            list("/api/v1/agents", op);
            fleet.get("/api/v1/agents/" + w.host, w.agentToken);
            fleet.post(
                    "/api/v1/agents/" + w.host + "/heartbeat", w.agentToken, Map.of("fencingEpoch", w.agentEpoch), 200);
            fleet.post("/api/v1/incarnations/" + w.target.id() + "/heartbeat", w.target.token(), Map.of(), 200);

            // one lease through single reports
            String router = tokens.mint(Role.ROUTER);
            String first = w.propose();
            fleet.post("/api/v1/donor-selections", router, selection(w, true), 200);
            fleet.post(
                    "/api/v1/donor-selections/batch", router, Map.of("selections", List.of(selection(w, false))), 200);
            w.pinAll(first);
            fleet.get("/api/v1/leases/" + first, op);
            list("/api/v1/leases?incarnationId=" + w.target.id(), op);
            w.destination(first, 0).expectStatus().isOk();
            Map<String, Object> order = w.orders(w.agentToken, w.host, 5000).getFirst();
            list("/api/v1/agents/" + w.host + "/orders/unfinished", w.agentToken);
            w.part(order.get("orderId"), 0, "RUNNING", 0).expectStatus().isOk();
            reportAllParts(w, order, "DONE");
            List<Map<String, Object>> delivered = w.commands(w.target, 5000);
            fleet.post(
                    "/api/v1/incarnations/" + w.target.id() + "/commands/acks",
                    w.target.token(),
                    Map.of(
                            "fencingEpoch",
                            w.epoch(w.target),
                            "acks",
                            delivered.stream()
                                    .map(c -> Map.of("commandId", c.get("commandId"), "ok", true))
                                    .toList()),
                    200);
            fleet.post(
                    "/api/v1/leases/" + first + "/commit",
                    w.target.token(),
                    Map.of("fencingEpoch", w.epoch(w.target), "committedBlocks", w.chain.length),
                    200);

            // one lease through batch reports
            String second = w.propose();
            w.pinAll(second);
            fleet.post(
                    "/api/v1/incarnations/" + w.target.id() + "/destinations",
                    w.target.token(),
                    Map.of(
                            "fencingEpoch",
                            w.epoch(w.target),
                            "destinations",
                            List.of(Map.of("leaseId", second, "ranks", ranks(w, 100)))),
                    200);
            reportAllParts(w, w.orders(w.agentToken, w.host, 5000).getFirst(), "DONE");
            for (Map<String, Object> c : w.commands(w.target, 5000)) {
                w.ack(w.target, c.get("commandId"), true, w.epoch(w.target))
                        .expectStatus()
                        .isOk();
            }
            fleet.post(
                    "/api/v1/incarnations/" + w.target.id() + "/commits",
                    w.target.token(),
                    Map.of(
                            "fencingEpoch",
                            w.epoch(w.target),
                            "commits",
                            List.of(Map.of("leaseId", second, "committedBlocks", w.chain.length))),
                    200);

            // a lease left uncertain by its agent, then proven quiesced, and one aborted
            String third = w.propose();
            w.pinAll(third);
            w.destination(third, 200).expectStatus().isOk();
            Map<String, Object> stuck = w.orders(w.agentToken, w.host, 5000).getFirst();
            reportAllParts(w, stuck, "UNCERTAIN");
            fleet.post(
                    "/api/v1/leases/" + third + "/quiesced",
                    op,
                    Map.of("side", "DESTINATION", "evidence", "the agent's NIXL request was released"),
                    200);
            String fourth = w.propose();
            fleet.post(
                    "/api/v1/leases/" + fourth + "/abort",
                    w.target.token(),
                    Map.of("fencingEpoch", w.epoch(w.target), "reason", "the request was cancelled"),
                    200);

            // typical problems
            fleet.postRaw("/api/v1/donor-selections", router, Map.of("requestId", "r"))
                    .expectStatus()
                    .isBadRequest();
            http.get().uri("/api/v1/tokens").exchange().expectStatus().isUnauthorized();
            http.get()
                    .uri("/api/v1/tokens")
                    .header("Authorization", "Bearer " + router)
                    .exchange()
                    .expectStatus()
                    .isForbidden();
            http.get()
                    .uri("/api/v1/leases/" + UUID.randomUUID())
                    .header("Authorization", "Bearer " + op)
                    .exchange()
                    .expectStatus()
                    .isNotFound();
            fleet.postRaw(
                            "/api/v1/incarnations/" + w.target.id() + "/heartbeat",
                            w.target.token(),
                            Map.of("fencingEpoch", w.epoch(w.target) + 5))
                    .expectStatus()
                    .isEqualTo(409);

            // tokens, audit
            Map<String, Object> minted = fleet.post(
                    "/api/v1/tokens", op, Map.of("role", "ROUTER", "subject", "router-" + UUID.randomUUID()), 201);
            list("/api/v1/tokens?limit=2", op);
            http.delete()
                    .uri("/api/v1/tokens/" + minted.get("tokenId"))
                    .header("Authorization", "Bearer " + op)
                    .exchange()
                    .expectStatus()
                    .isNoContent();
            list("/api/v1/audit?limit=3", op);

            // the bank's snapshot and reset, a domain's revocation
            Fleet.Engine spareDonor = fleet.ready("DECODE", w.domain, 2, Fleet.host());
            String spareBank = fleet.bank(spareDonor, 2, 64);
            put(
                    "/api/v1/banks/" + spareBank + "/parts/0/snapshot",
                    spareDonor.token(),
                    Map.of(
                            "throughEventId",
                            5,
                            "blocks",
                            List.of(Map.of("seqHash", Long.toUnsignedString(w.chain[0]), "position", 0, "slot", 3))));
            fleet.post("/api/v1/banks/" + spareBank + "/reset", spareDonor.token(), Map.of(), 200);
            // a bank fed by its engine's own KV event streams, read and replaced by its owner, read by
            // its host's agent, which reports a broken stream (docs/kv-events.md)
            String streamingHost = Fleet.host();
            Fleet.Engine streaming = fleet.ready("DECODE", w.domain, 2, streamingHost);
            List<Map<String, Object>> streamingParts = new ArrayList<>();
            for (int r = 0; r < 2; r++) {
                streamingParts.add(Map.of(
                        "rank", r, "regionRef", "shm://bank-" + streaming.id() + "-" + r, "bytesPerBlock", 1048576));
            }
            Map<String, Object> streamed = fleet.post(
                    "/api/v1/incarnations/" + streaming.id() + "/banks",
                    streaming.token(),
                    Map.of(
                            "capacityBlocks",
                            64,
                            "parts",
                            streamingParts,
                            "eventSource",
                            eventSource(streamingHost, "NATIVE_CACHE_CLEARED")),
                    201);
            String streamedBank = (String) streamed.get("bankId");
            fleet.get("/api/v1/banks/" + streamedBank + "/event-source", streaming.token());
            put(
                    "/api/v1/banks/" + streamedBank + "/event-source",
                    streaming.token(),
                    eventSource(streamingHost, "BANK_RESET"));
            String streamingAgent = tokens.mint(Role.AGENT, "agent-" + UUID.randomUUID(), streamingHost);
            http.get()
                    .uri("/api/v1/agents/" + streamingHost + "/event-sources")
                    .header("Authorization", "Bearer " + streamingAgent)
                    .exchange()
                    .expectStatus()
                    .isOk();
            fleet.post(
                    "/api/v1/banks/" + streamedBank + "/parts/1/stream-breaks",
                    streamingAgent,
                    Map.of("kind", "GAP", "expectedSequence", 41, "receivedSequence", 44),
                    200);

            String spare = fleet.domain(1, "GPU_CUDA_IPC");
            fleet.post("/api/v1/domains/" + spare + "/revoke", op, Map.of("reason", "superseded"), 200);

            // a prefill engine that drains and exits
            Fleet.Engine leaving = fleet.ready("PREFILL", w.domain, 2, Fleet.host());
            fleet.post(
                    "/api/v1/incarnations/" + leaving.id() + "/drain",
                    leaving.token(),
                    Map.of("reason", "rollout"),
                    200);
            fleet.post(
                    "/api/v1/incarnations/" + leaving.id() + "/exit",
                    leaving.token(),
                    Map.of("reason", "rollout"),
                    200);

            // an operator cleans up a donor that went silent
            clock.advance(Duration.ofSeconds(11));
            fleet.heartbeat(w.target);
            for (int i = 0; i < 40 && !liveness.sweepOnce().block().ran(); i++) {
                LeaseWorld.sleep(50);
            }
            list("/api/v1/cleanup/candidates", op);
            Map<String, Object> plan =
                    fleet.post("/api/v1/cleanup/plans", op, Map.of("incarnationId", w.donor.id()), 201);
            fleet.get("/api/v1/cleanup/plans/" + plan.get("planId"), op);
            fleet.post(
                    "/api/v1/cleanup/plans/" + plan.get("planId") + "/execute",
                    op,
                    Map.of("reason", "donor host failed", "quiescenceAttested", true),
                    200);
        } finally {
            w.restore();
        }
    }

    private static Map<String, Object> selection(LeaseWorld w, boolean explain) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("requestId", "req-" + UUID.randomUUID());
        body.put("targetIncarnationId", w.target.id());
        body.put(
                "seqHashes",
                java.util.Arrays.stream(w.chain)
                        .mapToObj(Long::toUnsignedString)
                        .toList());
        body.put("localPrefixBlocks", 0);
        body.put("deadlineMs", 2000);
        body.put("explain", explain);
        return body;
    }

    /** An event source of two ranks on {@code host}; rank 0 offers replay, rank 1 a topic. */
    private static Map<String, Object> eventSource(String host, String allBlocksCleared) {
        return Map.of(
                "format",
                "VLLM_KV_EVENTS",
                "allBlocksCleared",
                allBlocksCleared,
                "ranks",
                List.of(
                        Map.of(
                                "rank",
                                0,
                                "endpoint",
                                "tcp://" + host + ":5557",
                                "replayEndpoint",
                                "tcp://" + host + ":5558"),
                        Map.of("rank", 1, "endpoint", "tcp://" + host + ":5567", "topic", "kv-events")));
    }

    private static List<Map<String, Object>> ranks(LeaseWorld w, int start) {
        List<Map<String, Object>> ranks = new ArrayList<>();
        for (int r = 0; r < w.tp; r++) {
            ranks.add(Map.of(
                    "rank", r, "regionRef", w.destinationRegion(r), "slots", List.of(List.of(start, w.chain.length))));
        }
        return ranks;
    }

    private static void reportAllParts(LeaseWorld w, Map<String, Object> order, String state) {
        List<Map<String, Object>> reports = new ArrayList<>();
        for (Object p : (List<?>) order.get("parts")) {
            Map<?, ?> part = (Map<?, ?>) p;
            reports.add(Map.of(
                    "orderId", order.get("orderId"),
                    "rank", part.get("rank"),
                    "state", state,
                    "bytes", part.get("bytes"),
                    "durationUs", 850));
        }
        w.fleet.post(
                "/api/v1/agents/" + w.host + "/parts",
                w.agentToken,
                Map.of("fencingEpoch", w.agentEpoch, "reports", reports),
                200);
    }

    private void put(String uri, String token, Object body) {
        http.put()
                .uri(uri)
                .header("Authorization", "Bearer " + token)
                .contentType(MediaType.APPLICATION_JSON)
                .bodyValue(body)
                .exchange()
                .expectStatus()
                .isOk();
    }

    private void list(String uri, String token) {
        http.get()
                .uri(uri)
                .header("Authorization", "Bearer " + token)
                .exchange()
                .expectStatus()
                .isOk();
    }

    private String document() {
        return http.get()
                .uri("/v3/api-docs")
                .header("Authorization", "Bearer " + tokens.operator())
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody(String.class)
                .returnResult()
                .getResponseBody();
    }

    /** The first success of each operation, for people to read and to seed the document's examples. */
    private static void writeExamples(Map<String, ExchangeRecorder.Exchange> succeeded) throws Exception {
        Path dir = Path.of("target/recorded-exchanges");
        Files.createDirectories(dir);
        for (var e : succeeded.entrySet()) {
            Map<String, Object> out = new LinkedHashMap<>();
            out.put("method", e.getValue().method());
            out.put("path", e.getValue().path());
            out.put("query", e.getValue().query());
            out.put("status", e.getValue().status());
            out.put(
                    "request",
                    e.getValue().requestBody() == null
                            ? null
                            : ServedOpenApi.JSON.readTree(e.getValue().requestBody()));
            out.put(
                    "response",
                    e.getValue().responseBody().isEmpty()
                            ? null
                            : ServedOpenApi.JSON.readTree(e.getValue().responseBody()));
            Files.writeString(
                    dir.resolve(e.getKey() + ".json"),
                    ServedOpenApi.JSON.writerWithDefaultPrettyPrinter().writeValueAsString(out));
        }
    }

    private static String abbreviate(String s) {
        return s.length() > 300 ? s.substring(0, 300) + "…" : s;
    }
}
