package io.kvreuse.web;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.error.ProblemResponse;
import io.kvreuse.error.ProblemType;
import io.kvreuse.security.Role;
import io.kvreuse.support.ExchangeRecorder;
import io.kvreuse.support.Fleet;
import io.kvreuse.support.IntegrationTest;
import io.kvreuse.support.LeaseWorld;
import io.kvreuse.support.TestTokens;
import io.kvreuse.testkit.Requests;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.http.HttpMethod;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.reactive.result.method.annotation.RequestMappingHandlerMapping;

/**
 * Every operation of the API declares the catalogued problems it answers, and every problem a real
 * call answers is declared for its operation: the test sends the bad inputs each operation refuses
 * to the running application and PostgreSQL, records what the server answered, and looks each
 * answered problem type up in that operation's served OpenAPI description.
 */
@IntegrationTest
class DeclaredProblemsIntegrationTests {

    /**
     * Operations that answer only what any operation may answer (a missing token, a role that may
     * not call them, the store being down), so they have nothing of their own to declare; why.
     */
    static final Map<String, String> NOTHING_OF_THEIR_OWN = Map.of(
            "listAgents", "takes no parameter, path variable or body; it lists what the token may see",
            "getReuseSettings", "takes no parameter, path variable or body; any role reads the one document",
            "listCleanupCandidates", "takes no parameter, path variable or body; it lists what may be cleaned up");

    @Autowired
    WebTestClient http;

    @Autowired
    TestTokens tokens;

    @Autowired
    ExchangeRecorder recorder;

    @Autowired
    @Qualifier("requestMappingHandlerMapping")
    RequestMappingHandlerMapping mappings;

    ServedOpenApi doc;

    /** Answers that were not the problem the play expected: the play is then out of date. */
    private final List<String> surprises = new ArrayList<>();

    @BeforeEach
    void fetch() throws Exception {
        doc = new ServedOpenApi(http.get()
                .uri("/v3/api-docs")
                .header("Authorization", "Bearer " + tokens.operator())
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody(String.class)
                .returnResult()
                .getResponseBody());
    }

    @Test
    void everyApiOperationDeclaresProblemsFromTheCatalogueOrSaysWhyNot() {
        Map<String, ProblemResponse[]> declared = declarations();
        assertThat(declared)
                .hasSizeGreaterThan(50)
                .containsKeys("createBank", "reportPart", "findAudit", "selectDonor");
        Set<String> undeclared = new TreeSet<>();
        declared.forEach((id, problems) -> {
            if (problems.length == 0 && !NOTHING_OF_THEIR_OWN.containsKey(id)) {
                undeclared.add(id);
            }
        });
        assertThat(undeclared)
                .as("operations without @ProblemResponse; once the lease controllers declare theirs, empty"
                        + " DeclaredProblems.AWAITING_LEASE_DECLARATIONS")
                .containsExactlyInAnyOrderElementsOf(DeclaredProblems.AWAITING_LEASE_DECLARATIONS);
        assertThat(NOTHING_OF_THEIR_OWN.keySet())
                .as("justified operations that exist and declare nothing")
                .allSatisfy(id -> assertThat(declared.get(id)).isEmpty());

        // what an operation declares is what its served description lists, under the declared status
        List<String> unlisted = new ArrayList<>();
        for (ServedOpenApi.Operation op : doc.operations) {
            for (ProblemResponse p : declared.getOrDefault(op.id(), new ProblemResponse[0])) {
                for (ProblemType t : p.value()) {
                    if (DeclaredProblems.why(op, t.status(), t.slug()) != null) {
                        unlisted.add(op.id() + " " + t.status() + " " + t.slug());
                    }
                }
            }
        }
        assertThat(unlisted)
                .as("declared problems missing from the served document")
                .isEmpty();
    }

    @Test
    void everyProblemARealCallAnswersIsDeclaredForItsOperation() throws Exception {
        recorder.start();
        List<ExchangeRecorder.Exchange> recorded;
        try {
            playRefusals();
        } finally {
            recorded = recorder.stop();
        }
        assertThat(surprises).as("answers other than the play expected").isEmpty();
        assertThat(recorded).as("bad input answered with a server error").noneMatch(e -> e.status() >= 500);
        DeclaredProblems.Verdict verdict = DeclaredProblems.check(doc, recorded);
        assertThat(verdict.undeclared())
                .as("problems answered but not declared for their operation")
                .isEmpty();

        // the play reached every operation of the API with at least one problem
        Set<String> refused = new TreeSet<>();
        verdict.answered().forEach(a -> refused.add(a.substring(0, a.indexOf(' '))));
        assertThat(refused)
                .containsExactlyInAnyOrderElementsOf(
                        doc.operations.stream().map(ServedOpenApi.Operation::id).toList());
        assertThat(verdict.answered())
                .contains(
                        "createBank 409 bank-exists",
                        "sendInventoryEvents 409 event-gap",
                        "sendInventoryEvents 409 block-pinned",
                        "reportPart 409 part-final",
                        "listHostEventSources 403 token-host-mismatch",
                        "findAudit 400 invalid-parameter",
                        "selectDonor 400 invalid-hash");
        assertThat(verdict.awaiting())
                .as("only operations awaiting their declarations are tolerated")
                .allSatisfy(a -> assertThat(DeclaredProblems.AWAITING_LEASE_DECLARATIONS)
                        .contains(a.substring(0, a.indexOf(' '))));
    }

    @Test
    void anAnswerItsOperationDoesNotDeclareIsFound() {
        ServedOpenApi.Operation createBank = doc.operation(
                        "POST", "/api/v1/incarnations/" + UUID.randomUUID() + "/banks")
                .orElseThrow();
        assertThat(createBank.id()).isEqualTo("createBank");
        assertThat(DeclaredProblems.why(createBank, 409, "bank-exists")).isNull();
        assertThat(DeclaredProblems.why(createBank, 409, "conflict")).isNull();
        assertThat(DeclaredProblems.why(createBank, 409, "stale-epoch")).isEqualTo("not listed under 409");
        assertThat(DeclaredProblems.why(createBank, 404, "bank-not-found")).isEqualTo("not listed under 404");
        assertThat(DeclaredProblems.why(createBank, 400, "made-up")).contains("not a catalogued problem type");
        assertThat(DeclaredProblems.why(createBank, 400, "bank-exists")).contains("the catalogue says 409");

        ServedOpenApi.Operation getBank =
                doc.operation("GET", "/api/v1/banks/" + UUID.randomUUID()).orElseThrow();
        assertThat(DeclaredProblems.why(getBank, 409, "bank-dropped")).isEqualTo("status 409 is not declared");

        // a slug inside a longer one is not listed
        assertThat(DeclaredProblems.lists("lease-state-conflict (Lease is not in a state for this report)", "conflict"))
                .isFalse();
        assertThat(DeclaredProblems.lists("bank-exists (x). Any operation: conflict (Conflicting state)", "conflict"))
                .isTrue();
    }

    /** Each {@code /api/v1} operation's id and its {@code @ProblemResponse}s. */
    private Map<String, ProblemResponse[]> declarations() {
        Map<String, ProblemResponse[]> declared = new TreeMap<>();
        mappings.getHandlerMethods().forEach((info, method) -> {
            boolean api = info.getPatternsCondition().getPatterns().stream()
                    .anyMatch(p -> p.getPatternString().startsWith("/api/v1"));
            var operation = method.getMethodAnnotation(io.swagger.v3.oas.annotations.Operation.class);
            if (api && operation != null) {
                declared.put(operation.operationId(), method.getMethod().getAnnotationsByType(ProblemResponse.class));
            }
        });
        return declared;
    }

    // ---- the play: bad inputs each operation refuses, and the problem each one answers ----

    private void playRefusals() {
        LeaseWorld w = new LeaseWorld(http, tokens, 2, 60_000, 60_000, 120_000);
        try {
            banks(w);
            eventSources(w);
            agentsAndOrders(w);
            leases(w);
            registry(w);
            operators(w);
            String op = tokens.operator();
            refuse(HttpMethod.GET, "/api/v1/audit?limit=0", op, null, "invalid-parameter");
            refuse(HttpMethod.GET, "/api/v1/audit?since=yesterday", op, null, "invalid-parameter");
            refuse(HttpMethod.GET, "/api/v1/audit?before=last", op, null, "invalid-parameter");
            String router = tokens.mint(Role.ROUTER);
            Map<String, Object> badHash = new LinkedHashMap<>(Requests.selection(w.target.id(), w.chain, 500));
            badHash.put("seqHashes", List.of("not-a-hash"));
            refuse(HttpMethod.POST, "/api/v1/donor-selections", router, Map.of("requestId", "r"), "invalid-request");
            refuse(HttpMethod.POST, "/api/v1/donor-selections", router, badHash, "invalid-hash");
            refuse(HttpMethod.POST, "/api/v1/donor-selections", router, "{\"requestId\":", "malformed-request");
            String batch = "/api/v1/donor-selections/batch";
            refuse(HttpMethod.POST, batch, router, Map.of("selections", List.of(badHash)), "invalid-hash");
            refuse(HttpMethod.POST, batch, router, Map.of("selections", List.of()), "invalid-request");
        } finally {
            w.restore();
        }
    }

    private void banks(LeaseWorld w) {
        Fleet fleet = w.fleet;
        String bank = "/api/v1/banks/" + w.bankId;
        String create = "/api/v1/incarnations/" + w.donor.id() + "/banks";
        Map<String, Object> body = Requests.bank(256, Requests.bankParts(2, "other-" + w.donor.id(), 1048576));
        refuse(HttpMethod.POST, create, w.donor.token(), "{\"capacityBlocks\":", "malformed-request");
        refuse(HttpMethod.POST, create, w.donor.token(), Map.of("capacityBlocks", 0), "invalid-request");
        refuse(HttpMethod.POST, "/api/v1/incarnations/nope/banks", w.donor.token(), body, "invalid-parameter");
        refuse(
                HttpMethod.POST,
                "/api/v1/incarnations/" + UUID.randomUUID() + "/banks",
                w.donor.token(),
                body,
                "incarnation-not-found");
        refuse(HttpMethod.POST, create, w.donor.token(), body, "bank-exists");
        refuse(
                HttpMethod.POST,
                "/api/v1/incarnations/" + w.target.id() + "/banks",
                w.target.token(),
                Requests.bank(64, Requests.bankParts(2, "prefill-" + w.target.id(), 1048576)),
                "not-a-decode-incarnation");
        Fleet.Engine spare = fleet.ready("DECODE", w.domain, 2, Fleet.host());
        String spareCreate = "/api/v1/incarnations/" + spare.id() + "/banks";
        List<Map<String, Object>> parts = Requests.bankParts(2, "spare-" + spare.id(), 1048576);
        refuse(
                HttpMethod.POST,
                spareCreate,
                spare.token(),
                Requests.bank(64, parts.subList(0, 1)),
                "rank-layout-mismatch");
        refuse(
                HttpMethod.POST,
                spareCreate,
                spare.token(),
                Requests.bank(64, Requests.bankParts(2, "spare-" + spare.id(), 4096)),
                "bytes-per-block-mismatch");
        Map<String, Object> withSource = new LinkedHashMap<>(Requests.bank(64, parts));
        withSource.put("eventSource", source(List.of(stream(0, "tcp://h:5557"))));
        refuse(HttpMethod.POST, spareCreate, spare.token(), withSource, "event-source-ranks");
        withSource.put("eventSource", source(List.of(stream(0, "tcp://*:5557"), stream(1, "tcp://h:5558"))));
        refuse(HttpMethod.POST, spareCreate, spare.token(), withSource, "invalid-event-endpoint");
        String spareBank = fleet.bank(spare, 2, 64);
        String sb = "/api/v1/banks/" + spareBank;
        Fleet.Engine draining = fleet.ready("DECODE", w.domain, 2, Fleet.host());
        fleet.post("/api/v1/incarnations/" + draining.id() + "/drain", draining.token(), Map.of(), 200);
        refuse(
                HttpMethod.POST,
                "/api/v1/incarnations/" + draining.id() + "/banks",
                draining.token(),
                Requests.bank(64, Requests.bankParts(2, "drain-" + draining.id(), 1048576)),
                "incarnation-not-live");

        refuse(HttpMethod.POST, sb + "/parts/7/ready", spare.token(), Map.of(), "bank-part-not-found");
        refuse(HttpMethod.POST, sb + "/parts/first/ready", spare.token(), Map.of(), "invalid-parameter");
        refuse(HttpMethod.POST, sb + "/parts/0/ready", w.donor.token(), Map.of(), "bank-not-found");
        refuse(HttpMethod.POST, sb + "/reset?ifEpoch=latest", spare.token(), Map.of(), "invalid-parameter");
        refuse(
                HttpMethod.POST,
                "/api/v1/banks/" + UUID.randomUUID() + "/reset",
                spare.token(),
                Map.of(),
                "bank-not-found");
        refuse(HttpMethod.GET, "/api/v1/banks/nope", spare.token(), null, "invalid-parameter");
        refuse(HttpMethod.GET, sb, w.donor.token(), null, "bank-not-found");

        String events = sb + "/events";
        long[] chain = Fleet.chain(3);
        Map<String, Object> stored = Requests.stored(chain, 0);
        refuse(HttpMethod.POST, events, spare.token(), Map.of("rank", 0, "firstEventId", 1), "invalid-request");
        refuse(
                HttpMethod.POST,
                events,
                spare.token(),
                Requests.events(0, 1, List.of(Map.of("type", "REMOVED", "seqHashes", List.of("zz")))),
                "invalid-hash");
        refuse(
                HttpMethod.POST,
                events,
                spare.token(),
                Requests.events(0, 1, List.of(Map.of("type", "STORED", "seqHashes", List.of("1")))),
                "invalid-event");
        refuse(
                HttpMethod.POST,
                events,
                spare.token(),
                Requests.events(0, 1, List.of(Requests.stored(chain, 62))),
                "slot-out-of-range");
        refuse(
                HttpMethod.POST,
                events,
                spare.token(),
                Requests.events(0, 1, List.of(stored, Requests.stored(Fleet.chain(1), 0))),
                "duplicate-slot");
        refuse(
                HttpMethod.POST,
                events,
                spare.token(),
                Requests.events(
                        0, 1, List.of(Map.of("type", "STORED", "blocks", List.of(block(chain[0], null, 1, 0))))),
                "position-contradicts-parent");
        refuse(HttpMethod.POST, events, spare.token(), Requests.events(5, 1, List.of(stored)), "bank-part-not-found");
        refuse(HttpMethod.POST, events, w.donor.token(), Requests.events(0, 1, List.of(stored)), "bank-not-found");
        fleet.post(events, spare.token(), Requests.events(1, 1, List.of(stored)), 200);
        refuse(HttpMethod.POST, events, spare.token(), Requests.events(0, 9, List.of(stored)), "event-gap");
        refuse(HttpMethod.POST, events, spare.token(), Requests.events(0, 1, List.of(stored)), "snapshot-required");

        String snapshot = sb + "/parts/1/snapshot";
        refuse(
                HttpMethod.PUT,
                snapshot,
                spare.token(),
                Map.of("throughEventId", 2, "blocks", List.of(Map.of("seqHash", "1", "slot", 0))),
                "invalid-block");
        refuse(
                HttpMethod.PUT,
                snapshot,
                spare.token(),
                Map.of("throughEventId", 0, "blocks", List.of()),
                "stale-snapshot");
        refuse(HttpMethod.PUT, snapshot, spare.token(), Map.of("blocks", List.of()), "invalid-request");
        refuse(
                HttpMethod.PUT,
                snapshot,
                spare.token(),
                Map.of("throughEventId", 2, "blocks", List.of(block(chain[0], null, 0, 64))),
                "slot-out-of-range");
        refuse(
                HttpMethod.PUT,
                sb + "/parts/4/snapshot",
                spare.token(),
                Map.of("throughEventId", 2, "blocks", List.of()),
                "bank-part-not-found");

        // a bank whose owner exited is dropped with it
        Fleet.Engine leaving = fleet.ready("DECODE", w.domain, 2, Fleet.host());
        String leavingBank = fleet.bank(leaving, 2, 64);
        fleet.post("/api/v1/incarnations/" + leaving.id() + "/exit", leaving.token(), Map.of(), 200);
        awaitDropped(leavingBank);
        refuse(
                HttpMethod.POST,
                "/api/v1/banks/" + leavingBank + "/parts/0/ready",
                leaving.token(),
                Map.of(),
                "bank-dropped");
        refuse(HttpMethod.POST, "/api/v1/banks/" + leavingBank + "/reset", leaving.token(), Map.of(), "bank-dropped");
        refuse(
                HttpMethod.POST,
                "/api/v1/banks/" + leavingBank + "/events",
                leaving.token(),
                Requests.events(0, 1, List.of(stored)),
                "bank-dropped");
        refuse(
                HttpMethod.PUT,
                "/api/v1/banks/" + leavingBank + "/parts/0/snapshot",
                leaving.token(),
                Map.of("throughEventId", 2, "blocks", List.of()),
                "bank-dropped");
        refuse(
                HttpMethod.PUT,
                "/api/v1/banks/" + leavingBank + "/event-source",
                leaving.token(),
                source(List.of(stream(0, "tcp://h:1"), stream(1, "tcp://h:2"))),
                "bank-dropped");
        refuse(
                HttpMethod.POST,
                "/api/v1/banks/" + leavingBank + "/parts/0/stream-breaks",
                leaving.token(),
                Map.of("kind", "GAP", "expectedSequence", 4, "receivedSequence", 9),
                "bank-dropped");
        refuse(HttpMethod.GET, bank + "/event-source", w.donor.token(), null, "event-source-not-found");
    }

    private void eventSources(LeaseWorld w) {
        String source = "/api/v1/banks/" + w.bankId + "/event-source";
        Map<String, Object> both = source(List.of(stream(0, "tcp://h:5557"), stream(1, "tcp://h:5567")));
        Map<String, Object> unknownFormat = new LinkedHashMap<>(both);
        unknownFormat.put("format", "PROTOBUF");
        refuse(HttpMethod.PUT, source, w.donor.token(), unknownFormat, "malformed-request");
        refuse(HttpMethod.PUT, source, w.donor.token(), Map.of("format", "VLLM_KV_EVENTS"), "invalid-request");
        refuse(HttpMethod.PUT, source, w.donor.token(), source(List.of(stream(1, "tcp://h:1"))), "event-source-ranks");
        refuse(
                HttpMethod.PUT,
                source,
                w.donor.token(),
                source(List.of(stream(0, "udp://h:1"), stream(1, "tcp://h:1"))),
                "invalid-event-endpoint");
        refuse(HttpMethod.PUT, "/api/v1/banks/nope/event-source", w.donor.token(), both, "invalid-parameter");
        refuse(
                HttpMethod.PUT,
                "/api/v1/banks/" + UUID.randomUUID() + "/event-source",
                w.donor.token(),
                both,
                "bank-not-found");
        refuse(HttpMethod.PUT, source, w.target.token(), both, "bank-not-found");
        refuse(HttpMethod.GET, "/api/v1/banks/nope/event-source", w.donor.token(), null, "invalid-parameter");
        refuse(
                HttpMethod.GET,
                "/api/v1/banks/" + UUID.randomUUID() + "/event-source",
                w.donor.token(),
                null,
                "bank-not-found");

        refuse(
                HttpMethod.GET,
                "/api/v1/agents/" + Fleet.host() + "/event-sources",
                w.agentToken,
                null,
                "token-host-mismatch");
        refuse(
                HttpMethod.GET,
                "/api/v1/agents/" + Fleet.host() + "/event-sources",
                tokens.operator(),
                null,
                "no-such-agent");

        String breaks = "/api/v1/banks/" + w.bankId + "/parts/";
        Map<String, Object> gap = Map.of("kind", "GAP", "expectedSequence", 4, "receivedSequence", 9);
        refuse(HttpMethod.POST, breaks + "9/stream-breaks", w.agentToken, gap, "bank-part-not-found");
        refuse(HttpMethod.POST, breaks + "one/stream-breaks", w.agentToken, gap, "invalid-parameter");
        refuse(
                HttpMethod.POST,
                breaks + "0/stream-breaks",
                w.agentToken,
                Map.of("kind", "LOST", "expectedSequence", 4, "receivedSequence", 9),
                "malformed-request");
        refuse(HttpMethod.POST, breaks + "0/stream-breaks", w.agentToken, Map.of("kind", "GAP"), "invalid-request");
        refuse(
                HttpMethod.POST,
                "/api/v1/banks/" + UUID.randomUUID() + "/parts/0/stream-breaks",
                w.agentToken,
                gap,
                "bank-not-found");
    }

    private void agentsAndOrders(LeaseWorld w) {
        String other = Fleet.host();
        String otherAgent = tokens.mint(Role.AGENT, "agent-" + UUID.randomUUID(), other);
        String rival = tokens.mint(Role.AGENT, "rival-" + UUID.randomUUID(), w.host);
        refuse(HttpMethod.POST, "/api/v1/agents", w.agentToken, Requests.agent(other, 1, "n"), "token-host-mismatch");
        refuse(HttpMethod.POST, "/api/v1/agents", rival, Requests.agent(w.host, 1, "n"), "not-host-owner");
        Map<String, Object> twice = new LinkedHashMap<>(Requests.agent(w.host, 1, "n"));
        twice.put("gpus", List.of(Map.of("ordinal", 0, "uuid", "GPU-a"), Map.of("ordinal", 0, "uuid", "GPU-b")));
        refuse(HttpMethod.POST, "/api/v1/agents", w.agentToken, twice, "invalid-request");
        refuse(HttpMethod.POST, "/api/v1/agents", w.agentToken, "{\"hostId\":", "malformed-request");

        String heartbeat = "/api/v1/agents/" + w.host + "/heartbeat";
        refuse(HttpMethod.POST, heartbeat, w.agentToken, Map.of("fencingEpoch", w.agentEpoch + 5), "stale-epoch");
        refuse(HttpMethod.POST, heartbeat, w.agentToken, Map.of("fencingEpoch", 0), "invalid-request");
        refuse(HttpMethod.POST, heartbeat, w.agentToken, Map.of("fencingEpoch", "one"), "malformed-request");
        refuse(HttpMethod.POST, heartbeat, otherAgent, Map.of(), "token-host-mismatch");
        refuse(HttpMethod.POST, heartbeat, rival, Map.of(), "not-host-owner");
        refuse(HttpMethod.POST, "/api/v1/agents/" + other + "/heartbeat", otherAgent, Map.of(), "no-such-agent");

        refuse(HttpMethod.GET, "/api/v1/agents", w.donor.token(), null, "forbidden");
        refuse(HttpMethod.GET, "/api/v1/agents", null, null, "unauthorized");
        refuse(HttpMethod.GET, "/api/v1/agents/" + w.host, otherAgent, null, "token-host-mismatch");
        refuse(HttpMethod.GET, "/api/v1/agents/" + w.host, rival, null, "not-host-owner");
        refuse(HttpMethod.GET, "/api/v1/agents/" + other, tokens.operator(), null, "no-such-agent");

        String orders = "/api/v1/agents/" + w.host + "/orders";
        refuse(HttpMethod.GET, orders + "?waitMs=-1", w.agentToken, null, "invalid-parameter");
        refuse(HttpMethod.GET, orders, otherAgent, null, "token-host-mismatch");
        refuse(HttpMethod.GET, orders, rival, null, "not-host-owner");
        refuse(HttpMethod.GET, "/api/v1/agents/" + other + "/orders", otherAgent, null, "no-such-agent");
        refuse(HttpMethod.GET, orders + "/unfinished", otherAgent, null, "token-host-mismatch");
        refuse(HttpMethod.GET, orders + "/unfinished", rival, null, "not-host-owner");
        refuse(HttpMethod.GET, "/api/v1/agents/" + other + "/orders/unfinished", otherAgent, null, "no-such-agent");

        // a lease with an order: its parts are reported, one to the end
        String lease = w.propose();
        w.pinAll(lease);
        refuse(
                HttpMethod.POST,
                "/api/v1/banks/" + w.bankId + "/events",
                w.donor.token(),
                Requests.events(
                        0,
                        2,
                        List.of(Map.of("type", "REMOVED", "seqHashes", List.of(Long.toUnsignedString(w.chain[0]))))),
                "block-pinned");
        w.destination(lease, 0).expectStatus().isOk();
        Map<String, Object> order = w.orders(w.agentToken, w.host, 5000).getFirst();
        Map<?, ?> first = (Map<?, ?>) ((List<?>) order.get("parts")).getFirst();
        long bytes = ((Number) first.get("bytes")).longValue();
        String part = "/api/v1/orders/" + order.get("orderId") + "/parts/";
        refuse(
                HttpMethod.POST,
                part + "0",
                w.agentToken,
                report("RUNNING", bytes + 1, w.agentEpoch),
                "invalid-request");
        refuse(HttpMethod.POST, part + "0", w.agentToken, report("QUEUED", 0, w.agentEpoch), "malformed-request");
        refuse(HttpMethod.POST, part + "zero", w.agentToken, report("RUNNING", 0, w.agentEpoch), "invalid-parameter");
        refuse(HttpMethod.POST, part + "0", w.agentToken, report("RUNNING", 0, w.agentEpoch + 3), "stale-epoch");
        refuse(HttpMethod.POST, part + "9", w.agentToken, report("RUNNING", 0, w.agentEpoch), "no-such-part");
        refuse(HttpMethod.POST, part + "0", otherAgent, report("RUNNING", 0, 1), "token-host-mismatch");
        refuse(
                HttpMethod.POST,
                "/api/v1/orders/" + UUID.randomUUID() + "/parts/0",
                w.agentToken,
                report("RUNNING", 0, w.agentEpoch),
                "no-such-order");
        w.part(order.get("orderId"), 0, "FAILED", 0).expectStatus().isOk();
        refuse(HttpMethod.POST, part + "0", w.agentToken, report("DONE", bytes, w.agentEpoch), "part-final");

        String parts = "/api/v1/agents/" + w.host + "/parts";
        Map<String, Object> item = new LinkedHashMap<>(report("DONE", bytes, w.agentEpoch));
        item.remove("fencingEpoch");
        item.put("orderId", order.get("orderId"));
        item.put("rank", 1);
        refuse(
                HttpMethod.POST,
                parts,
                w.agentToken,
                Map.of("fencingEpoch", w.agentEpoch + 2, "reports", List.of(item)),
                "stale-epoch");
        refuse(HttpMethod.POST, parts, w.agentToken, Map.of("reports", List.of(item)), "invalid-request");
        refuse(HttpMethod.POST, parts, w.agentToken, "{\"reports\":[", "malformed-request");
        refuse(
                HttpMethod.POST,
                "/api/v1/agents/" + w.host + "/parts",
                otherAgent,
                Map.of("fencingEpoch", 1, "reports", List.of(item)),
                "token-host-mismatch");
        refuse(
                HttpMethod.POST,
                "/api/v1/agents/" + other + "/parts",
                otherAgent,
                Map.of("fencingEpoch", 1, "reports", List.of(item)),
                "no-such-agent");
    }

    /** The lease operations' refusals, held against their declarations once they have them. */
    private void leases(LeaseWorld w) {
        String op = tokens.operator();
        String unknown = "/api/v1/leases/" + UUID.randomUUID();
        long target = w.epoch(w.target);
        refuse(HttpMethod.GET, unknown, op, null, "no-such-lease");
        refuse(HttpMethod.GET, "/api/v1/leases?limit=0", op, null, "invalid-parameter");
        refuse(
                HttpMethod.POST,
                unknown + "/destination",
                w.target.token(),
                Map.of("fencingEpoch", target, "ranks", List.of()),
                "invalid-request");
        refuse(
                HttpMethod.POST,
                unknown + "/commit",
                w.target.token(),
                Map.of("fencingEpoch", target, "committedBlocks", 1),
                "no-such-lease");
        refuse(HttpMethod.POST, unknown + "/abort", w.target.token(), Map.of("fencingEpoch", target), "no-such-lease");
        refuse(
                HttpMethod.POST,
                unknown + "/quiesced",
                op,
                Map.of("side", "MIDDLE", "evidence", "e"),
                "malformed-request");
        String incarnation = "/api/v1/incarnations/" + w.target.id();
        refuse(
                HttpMethod.POST,
                incarnation + "/commands/acks",
                w.target.token(),
                Map.of("fencingEpoch", target + 4, "acks", List.of(Map.of("commandId", UUID.randomUUID(), "ok", true))),
                "stale-epoch");
        refuse(
                HttpMethod.POST,
                incarnation + "/destinations",
                w.target.token(),
                Map.of("fencingEpoch", target + 4, "destinations", List.of()),
                "invalid-request");
        refuse(
                HttpMethod.POST,
                incarnation + "/commits",
                w.target.token(),
                Map.of(
                        "fencingEpoch",
                        target + 4,
                        "commits",
                        List.of(Map.of("leaseId", UUID.randomUUID(), "committedBlocks", 1))),
                "stale-epoch");
        refuse(HttpMethod.GET, incarnation + "/commands?waitMs=-1", w.target.token(), null, "invalid-parameter");
        refuse(
                HttpMethod.POST,
                incarnation + "/commands/" + UUID.randomUUID() + "/ack",
                w.target.token(),
                Map.of("ok", true, "fencingEpoch", target),
                "no-such-command");
        leaseParties(w);
    }

    /** A live lease's refusals: the wrong party, a stale epoch, a state or a destination it does not take. */
    private void leaseParties(LeaseWorld w) {
        String op = tokens.operator();
        long epoch = w.epoch(w.target);
        String lease = w.propose();
        String at = "/api/v1/leases/" + lease;
        refuse(HttpMethod.GET, "/api/v1/leases/nope", op, null, "invalid-parameter");
        refuse(HttpMethod.GET, "/api/v1/leases?state=GONE", op, null, "invalid-parameter");
        refuse(
                HttpMethod.POST,
                at + "/commit",
                w.target.token(),
                Map.of("fencingEpoch", epoch, "committedBlocks", 1),
                "lease-state-conflict");
        refuse(
                HttpMethod.POST,
                at + "/commit",
                w.target.token(),
                Map.of("fencingEpoch", epoch, "committedBlocks", 1000),
                "invalid-request");
        refuse(
                HttpMethod.POST,
                at + "/commit",
                w.target.token(),
                Map.of("fencingEpoch", epoch + 3, "committedBlocks", 1),
                "stale-epoch");
        refuse(
                HttpMethod.POST,
                at + "/commit",
                w.donor.token(),
                Map.of("fencingEpoch", w.epoch(w.donor), "committedBlocks", 1),
                "not-lease-party");
        Map<String, Object> nowhere = destination(w, "shm://nowhere-", 1000, epoch);
        refuse(HttpMethod.POST, at + "/destination", w.target.token(), nowhere, "destination-region-not-registered");
        refuse(
                HttpMethod.POST,
                at + "/destination",
                w.target.token(),
                destination(w, null, 1000, epoch + 3),
                "stale-epoch");
        refuse(
                HttpMethod.POST,
                at + "/destination",
                w.donor.token(),
                destination(w, null, 1000, w.epoch(w.donor)),
                "not-lease-party");
        refuse(
                HttpMethod.POST,
                at + "/abort",
                w.donor.token(),
                Map.of("fencingEpoch", w.epoch(w.donor)),
                "not-lease-party");
        refuse(HttpMethod.POST, at + "/abort", w.target.token(), Map.of(), "invalid-request");
        refuse(HttpMethod.POST, at + "/abort", w.target.token(), Map.of("fencingEpoch", epoch + 3), "stale-epoch");
        Map<String, Object> quiet = Map.of("side", "DESTINATION", "evidence", "released", "fencingEpoch", 1);
        refuse(HttpMethod.POST, at + "/quiesced", w.donor.token(), quiet, "not-lease-party");
        String stranger = tokens.mint(Role.AGENT, "agent-" + UUID.randomUUID(), Fleet.host());
        refuse(HttpMethod.POST, at + "/quiesced", stranger, quiet, "no-such-lease");
        refuse(
                HttpMethod.POST,
                at + "/quiesced",
                w.target.token(),
                Map.of("side", "DESTINATION", "evidence", "released", "fencingEpoch", epoch + 3),
                "stale-epoch");
        refuse(HttpMethod.POST, at + "/quiesced", op, Map.of("side", "SOURCE"), "invalid-request");

        w.pinAll(lease);
        fleet(w).post(at + "/destination", w.target.token(), destination(w, null, 1000, epoch), 200);
        refuse(
                HttpMethod.POST,
                at + "/destination",
                w.target.token(),
                destination(w, null, 2000, epoch),
                "destination-exists");
        String second = w.propose();
        w.pinAll(second);
        refuse(
                HttpMethod.POST,
                "/api/v1/leases/" + second + "/destination",
                w.target.token(),
                destination(w, null, 1004, epoch),
                "destination-overlap");

        String unknown = "/api/v1/incarnations/" + UUID.randomUUID();
        String engine = tokens.mint(Role.ENGINE);
        refuse(HttpMethod.GET, unknown + "/commands", engine, null, "incarnation-not-found");
        Map<String, Object> ack = Map.of("ok", true, "fencingEpoch", 1);
        refuse(
                HttpMethod.POST,
                unknown + "/commands/" + UUID.randomUUID() + "/ack",
                engine,
                ack,
                "incarnation-not-found");
        refuse(
                HttpMethod.POST,
                unknown + "/commands/acks",
                engine,
                Map.of("fencingEpoch", 1, "acks", List.of(Map.of("commandId", UUID.randomUUID(), "ok", true))),
                "incarnation-not-found");
        refuse(
                HttpMethod.POST,
                unknown + "/destinations",
                engine,
                Map.of(
                        "fencingEpoch",
                        1,
                        "destinations",
                        List.of(Map.of("leaseId", lease, "ranks", ranks(w, null, 0)))),
                "incarnation-not-found");
        refuse(HttpMethod.POST, unknown + "/commits", engine, "{\"commits\":", "malformed-request");
        String incarnation = "/api/v1/incarnations/" + w.target.id();
        refuse(
                HttpMethod.POST,
                incarnation + "/destinations",
                w.target.token(),
                Map.of(
                        "fencingEpoch",
                        epoch + 3,
                        "destinations",
                        List.of(Map.of("leaseId", lease, "ranks", ranks(w, null, 0)))),
                "stale-epoch");
        for (String id : List.of(lease, second)) {
            fleet(w).post("/api/v1/leases/" + id + "/abort", op, Map.of("reason", "the test is done"), 200);
        }
    }

    private static Fleet fleet(LeaseWorld w) {
        return w.fleet;
    }

    /** A destination body of every rank at slots {@code [start, start + fetch)}; null region: the registered ones. */
    private static Map<String, Object> destination(LeaseWorld w, @Nullable String region, int start, long epoch) {
        return Map.of("fencingEpoch", epoch, "ranks", ranks(w, region, start));
    }

    private static List<Map<String, Object>> ranks(LeaseWorld w, @Nullable String region, int start) {
        List<Map<String, Object>> ranks = new ArrayList<>();
        for (int r = 0; r < w.tp; r++) {
            ranks.add(Map.of(
                    "rank",
                    r,
                    "regionRef",
                    region == null ? w.destinationRegion(r) : region + r,
                    "slots",
                    List.of(List.of(start, w.chain.length))));
        }
        return ranks;
    }

    /** Domains, incarnations and their destination regions. */
    private void registry(LeaseWorld w) {
        String op = tokens.operator();
        refuse(HttpMethod.POST, "/api/v1/domains", op, "{\"modelId\":", "malformed-request");
        refuse(HttpMethod.GET, "/api/v1/domains?status=GONE", op, null, "invalid-parameter");
        refuse(HttpMethod.GET, "/api/v1/domains/no-such-domain", op, null, "domain-not-found");
        refuse(HttpMethod.POST, "/api/v1/domains/no-such-domain/revoke", op, Map.of("reason", "r"), "domain-not-found");
        String engine = tokens.mint(Role.ENGINE);
        String unknown = "/api/v1/incarnations/" + UUID.randomUUID();
        refuse(HttpMethod.POST, "/api/v1/incarnations", engine, "{\"role\":", "malformed-request");
        String target = "/api/v1/incarnations/" + w.target.id();
        long epoch = w.epoch(w.target);
        refuse(
                HttpMethod.POST,
                target + "/heartbeat",
                w.target.token(),
                Map.of("fencingEpoch", epoch + 5),
                "stale-epoch");
        refuse(HttpMethod.POST, unknown + "/drain", engine, Map.of(), "incarnation-not-found");
        refuse(HttpMethod.POST, unknown + "/exit", engine, Map.of(), "incarnation-not-found");
        refuse(HttpMethod.GET, "/api/v1/incarnations?limit=0", op, null, "invalid-parameter");
        refuse(HttpMethod.GET, unknown, op, null, "incarnation-not-found");
        Map<String, Object> regions = Map.of(
                "fencingEpoch",
                epoch + 5,
                "regions",
                List.of(Map.of("rank", 0, "regionRef", w.destinationRegion(0), "capacityBlocks", 64)));
        refuse(HttpMethod.POST, target + "/destination-regions", w.target.token(), regions, "stale-epoch");
        refuse(HttpMethod.POST, unknown + "/destination-regions", engine, regions, "incarnation-not-found");
        refuse(HttpMethod.GET, "/api/v1/incarnations/nope/destination-regions", op, null, "invalid-parameter");
    }

    /** Tokens, settings and cleanup. */
    private void operators(LeaseWorld w) {
        String op = tokens.operator();
        refuse(HttpMethod.POST, "/api/v1/tokens", op, Map.of("role", "AGENT", "subject", "agent-x"), "host-required");
        refuse(HttpMethod.GET, "/api/v1/tokens?limit=0", op, null, "invalid-parameter");
        refuse(HttpMethod.DELETE, "/api/v1/tokens/" + UUID.randomUUID(), op, null, "token-not-found");
        refuse(HttpMethod.DELETE, "/api/v1/tokens/nope", op, null, "invalid-parameter");
        refuse(HttpMethod.GET, "/api/v1/settings/reuse", null, null, "unauthorized");
        refuse(HttpMethod.PUT, "/api/v1/settings/reuse", op, Map.of("bogus", 1), "unknown-setting");
        String router = tokens.mint(Role.ROUTER);
        refuse(HttpMethod.GET, "/api/v1/cleanup/candidates", router, null, "forbidden");
        refuse(
                HttpMethod.POST,
                "/api/v1/cleanup/plans",
                op,
                Map.of("incarnationId", UUID.randomUUID()),
                "incarnation-not-found");
        refuse(HttpMethod.GET, "/api/v1/cleanup/plans/" + UUID.randomUUID(), op, null, "no-such-cleanup-plan");
        refuse(
                HttpMethod.POST,
                "/api/v1/cleanup/plans/" + UUID.randomUUID() + "/execute",
                op,
                Map.of("reason", "r", "quiescenceAttested", true),
                "no-such-cleanup-plan");
        // an acknowledgement of a command the incarnation never had is answered in its place
        w.fleet.post(
                "/api/v1/incarnations/" + w.target.id() + "/commands/acks",
                w.target.token(),
                Map.of(
                        "fencingEpoch",
                        w.epoch(w.target),
                        "acks",
                        List.of(Map.of("commandId", UUID.randomUUID(), "ok", true))),
                200);
    }

    private static Map<String, Object> report(String state, long bytes, long epoch) {
        return Map.of("state", state, "bytes", bytes, "durationUs", 700, "fencingEpoch", epoch);
    }

    private static Map<String, Object> source(List<Map<String, Object>> ranks) {
        return Map.of("format", "VLLM_KV_EVENTS", "allBlocksCleared", "NATIVE_CACHE_CLEARED", "ranks", ranks);
    }

    private static Map<String, Object> stream(int rank, String endpoint) {
        return Map.of("rank", rank, "endpoint", endpoint);
    }

    private static Map<String, Object> block(long hash, @Nullable Long parent, int position, int slot) {
        Map<String, Object> b = new LinkedHashMap<>();
        b.put("seqHash", Long.toUnsignedString(hash));
        if (parent != null) {
            b.put("parentHash", Long.toUnsignedString(parent));
        }
        b.put("position", position);
        b.put("slot", slot);
        return b;
    }

    private void awaitDropped(String bankId) {
        for (int i = 0; i < 100; i++) {
            Map<String, Object> bank = new Fleet(http, tokens).get("/api/v1/banks/" + bankId, tokens.operator());
            if ("DROPPED".equals(bank.get("state"))) {
                return;
            }
            LeaseWorld.sleep(50);
        }
        throw new AssertionError("bank " + bankId + " was not dropped after its owner exited");
    }

    /**
     * Sends one request the operation must refuse and notes an answer other than {@code slug}: a
     * string body goes as it is (for malformed JSON), any other as JSON, null as none.
     */
    private void refuse(HttpMethod method, String uri, @Nullable String token, @Nullable Object body, String slug) {
        WebTestClient.RequestBodySpec request = http.method(method).uri(uri);
        if (token != null) {
            request.header("Authorization", "Bearer " + token);
        }
        WebTestClient.RequestHeadersSpec<?> sent = request;
        if (body instanceof String raw) {
            sent = request.contentType(MediaType.APPLICATION_JSON).bodyValue(raw.getBytes(StandardCharsets.UTF_8));
        } else if (body != null) {
            sent = request.contentType(MediaType.APPLICATION_JSON).bodyValue(body);
        }
        var result = sent.exchange().expectBody(String.class).returnResult();
        String answered;
        try {
            answered = DeclaredProblems.slug(result.getResponseBody() == null ? "" : result.getResponseBody());
        } catch (Exception e) {
            answered = "(not JSON: " + result.getResponseBody() + ")";
        }
        int expected = ProblemType.ofSlug(slug).orElseThrow().status();
        if (result.getStatus().value() != expected || !answered.equals(slug)) {
            surprises.add(method + " " + uri + ": expected " + expected + " " + slug + ", answered "
                    + result.getStatus().value() + " " + answered);
        }
    }
}
