package io.kvreuse.system;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.testkit.Answer;
import io.kvreuse.testkit.KvReuseClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every operation of the served OpenAPI document × every caller (each role on its own fleet, an
 * engine and an agent on another engine's or host's resources, no token, invalid tokens), each
 * sending a well-formed request with real ids, against {@link AccessPolicy}'s table: 401 without a
 * valid token, 403 for a role (or host) the policy refuses, 404 where it hides another owner's
 * resource, and neither 401 nor 403 where it allows the call. Refused calls go first and must leave
 * the database as it was; then the allowed ones. The observed matrix goes to {@code
 * target/authorization-matrix.md}.
 */
class AuthorizationMatrixSystemTests {

    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    @TempDir
    static Path home;

    static PopulatedFleet fleet;
    static OpenApiDocument document;
    static SchemaValues values;

    @BeforeAll
    static void start() throws Exception {
        fleet = PopulatedFleet.start(home);
        document = OpenApiDocument.fetch(fleet.http, fleet.tokens.get(Caller.OPERATOR));
        values = new SchemaValues(fleet.ids);
    }

    @AfterAll
    static void stop() throws Exception {
        if (fleet != null) {
            try (var db = fleet.db()) {
                Invariants.assertHold(db); // the allowed calls went through every endpoint
            } finally {
                fleet.close();
            }
        }
    }

    @Test
    void thePolicyTableCoversExactlyTheOperationsOfTheDocument() {
        Set<String> documented = document.operations().stream()
                .map(OpenApiDocument.Operation::key)
                .collect(Collectors.toCollection(TreeSet::new));
        assertThat(documented).hasSizeGreaterThan(30);
        assertThat(new TreeSet<>(AccessPolicy.operations()))
                .as("operations in the access policy table")
                .isEqualTo(documented);
    }

    @Test
    void everyOperationAndCallerGetsWhatThePolicySays() throws Exception {
        Map<String, Map<Caller, Integer>> observed = new LinkedHashMap<>();
        List<String> mismatches = new ArrayList<>();
        List<OpenApiDocument.Operation> ops = new ArrayList<>(document.operations());
        // reads first, so that what allowed writes change later cannot hide a resource from its owner
        ops.sort(Comparator.comparing(
                        (OpenApiDocument.Operation op) -> !op.method().equals("GET"))
                .thenComparing(OpenApiDocument.Operation::key));

        DatabaseSnapshot before;
        try (var db = fleet.db()) {
            before = DatabaseSnapshot.take(db);
        }
        int refused = 0;
        int invalid = 0;
        for (OpenApiDocument.Operation op : ops) {
            for (Caller caller : Caller.values()) {
                AccessPolicy.Expected expected = AccessPolicy.expected(op.key(), caller);
                if (expected == AccessPolicy.Expected.ALLOWED) {
                    continue;
                }
                RawHttp.Request request = values.request(op, token(caller, invalid++));
                RawHttp.Response r = fleet.http.send(request, TIMEOUT);
                refused++;
                observed.computeIfAbsent(op.key(), k -> new EnumMap<>(Caller.class))
                        .put(caller, r.status());
                String judged = ApiFuzzSystemTests.judge(expected.status(), r);
                if (judged != null) {
                    mismatches.add(op.key() + " as " + caller + ": " + judged + " (" + expected + "), got " + r);
                }
            }
        }
        Map<String, String> changed;
        try (var db = fleet.db()) {
            changed = DatabaseSnapshot.take(db).changedSince(before);
        }

        Map<String, Integer> ownerStatus = new LinkedHashMap<>();
        for (OpenApiDocument.Operation op : ops) {
            for (Caller caller : Caller.values()) {
                if (AccessPolicy.expected(op.key(), caller) != AccessPolicy.Expected.ALLOWED) {
                    continue;
                }
                RawHttp.Response r = fleet.http.send(values.request(op, fleet.tokens.get(caller)), TIMEOUT);
                observed.computeIfAbsent(op.key(), k -> new EnumMap<>(Caller.class))
                        .put(caller, r.status());
                if (!caller.foreign()) {
                    ownerStatus.put(op.key() + " " + caller.role(), r.status());
                }
                if (r.status() == 401 || r.status() == 403) {
                    mismatches.add(op.key() + " as " + caller + ": allowed by the policy, got " + r);
                } else {
                    String judged = ApiFuzzSystemTests.judge(-1, r);
                    if (judged != null) {
                        mismatches.add(op.key() + " as " + caller + ": " + judged + ", got " + r);
                    }
                }
            }
        }
        // a hidden resource is one its owner reaches: otherwise a 404 proves nothing
        for (OpenApiDocument.Operation op : ops) {
            for (Caller foreign : List.of(Caller.FOREIGN_ENGINE, Caller.FOREIGN_AGENT)) {
                if (AccessPolicy.expected(op.key(), foreign) == AccessPolicy.Expected.HIDDEN) {
                    Integer owner = ownerStatus.get(op.key() + " " + foreign.role());
                    if (owner == null || owner == 404) {
                        mismatches.add(op.key() + ": the owning " + foreign.role() + " got " + owner
                                + ", so the 404 for " + foreign + " shows nothing");
                    }
                }
            }
        }
        writeMatrix(observed, refused);

        assertThat(mismatches).as("calls that do not match the access policy").isEmpty();
        assertThat(changed).as("tables changed by refused calls").isEmpty();
    }

    @Test
    void hostBoundTokensActOnlyOnTheirHostEvenOneNobodyRegistered() throws Exception {
        KvReuseClient api = fleet.api;
        String operator = fleet.tokens.get(Caller.OPERATOR);
        String unclaimed = "unclaimed-" + java.util.UUID.randomUUID();
        DatabaseSnapshot before;
        try (var db = fleet.db()) {
            before = DatabaseSnapshot.take(db);
        }
        // an agent token names its host at minting; routers and operators have none
        expectProblem(
                api.post("/api/v1/tokens", operator, Map.of("role", "AGENT", "subject", "no-host")),
                400,
                "host-required");
        expectProblem(
                api.post("/api/v1/tokens", operator, Map.of("role", "ROUTER", "subject", "r", "hostId", unclaimed)),
                400,
                "host-not-allowed");
        // the agent bound to host B may not claim a host nobody registered, nor act for it
        String agentB = fleet.tokens.get(Caller.FOREIGN_AGENT);
        Map<String, Object> registration = Map.of(
                "hostId",
                unclaimed,
                "gpus",
                List.of(Map.of("ordinal", 0, "uuid", "GPU-" + java.util.UUID.randomUUID())),
                "nixlAgents",
                List.of());
        assertThat(expectProblem(api.post("/api/v1/agents", agentB, registration), 403, "token-host-mismatch")
                        .path("tokenHostId")
                        .asString())
                .isEqualTo(fleet.hostB);
        expectProblem(
                api.post("/api/v1/agents/" + unclaimed + "/heartbeat", agentB, Map.of()), 403, "token-host-mismatch");
        expectProblem(api.get("/api/v1/agents/" + unclaimed + "/orders?waitMs=0", agentB), 403, "token-host-mismatch");
        expectProblem(api.get("/api/v1/agents/" + unclaimed, operator), 404, "no-such-agent");
        // the engine scoped to host B may not register on another host, not even an unclaimed one
        Map<String, Object> incarnation = new LinkedHashMap<>();
        incarnation.put("role", "DECODE");
        incarnation.put("domainId", fleet.ids.get("domainId"));
        incarnation.put("hostId", unclaimed);
        incarnation.put("controlEndpoint", "tcp://" + unclaimed + ":5557");
        incarnation.put("capabilities", List.of("kv.fetch_gpu@1.0"));
        incarnation.put(
                "ranks", List.of(Map.of("rank", 0, "gpuOrdinal", 0, "gpuUuid", "GPU-" + java.util.UUID.randomUUID())));
        expectProblem(
                api.post("/api/v1/incarnations", fleet.tokens.get(Caller.FOREIGN_ENGINE), incarnation),
                403,
                "host-out-of-scope");
        assertThat(api.get("/api/v1/incarnations?hostId=" + unclaimed, operator)
                        .json()
                        .size())
                .isZero();
        Map<String, String> changed;
        try (var db = fleet.db()) {
            changed = DatabaseSnapshot.take(db).changedSince(before);
        }
        assertThat(changed).as("tables changed by refused host-bound calls").isEmpty();
    }

    @Test
    void aTargetMayNeitherOfferNorNameMemoryItDidNotRegister() throws Exception {
        KvReuseClient api = fleet.api;
        String engine = fleet.tokens.get(Caller.ENGINE);
        String lease = (String) fleet.ids.get("proposedLeaseId");
        DatabaseSnapshot before;
        try (var db = fleet.db()) {
            before = DatabaseSnapshot.take(db);
        }
        // the donor's bank region, on the same host, is not the target's to offer
        expectProblem(
                api.post(
                        "/api/v1/incarnations/" + fleet.prefillId + "/destination-regions",
                        engine,
                        Map.of(
                                "fencingEpoch",
                                fleet.prefillEpoch,
                                "regions",
                                List.of(Map.of("rank", 0, "regionRef", "shm://fuzz-bank", "capacityBlocks", 64)))),
                409,
                "region-held");
        for (String ref : List.of("shm://fuzz-bank", "shm://never-registered")) {
            expectProblem(destination(api, engine, lease, ref), 422, "destination-region-not-registered");
        }
        for (String ref : List.of("shm://../../../etc/passwd", "file:///etc/passwd")) {
            expectProblem(destination(api, engine, lease, ref), 400, "invalid-request");
        }
        Map<String, String> changed;
        try (var db = fleet.db()) {
            changed = DatabaseSnapshot.take(db).changedSince(before);
        }
        assertThat(changed).as("tables changed by refused destinations").isEmpty();
    }

    private static Answer destination(KvReuseClient api, String engine, String lease, String ref) throws Exception {
        return api.post(
                "/api/v1/leases/" + lease + "/destination",
                engine,
                Map.of(
                        "fencingEpoch",
                        fleet.prefillEpoch,
                        "ranks",
                        List.of(Map.of("rank", 0, "regionRef", ref, "slots", List.of(List.of(16, 8))))));
    }

    private static tools.jackson.databind.JsonNode expectProblem(Answer r, int status, String slug) {
        assertThat(r.status()).as(r.toString()).isEqualTo(status);
        assertThat(r.contentType()).as(r.toString()).startsWith("application/problem+json");
        tools.jackson.databind.JsonNode problem = r.json();
        assertThat(problem.path("type").asString()).as(r.toString()).isEqualTo("https://kvreuse.io/problems/" + slug);
        return problem;
    }

    @Test
    void healthIsOpenWithoutATokenAndMetricsAndTheDocumentNeedAValidOne() {
        for (Caller caller : Caller.values()) {
            String token = token(caller, caller.ordinal());
            for (String path : List.of("/actuator/health", "/actuator/health/liveness", "/actuator/health/readiness")) {
                RawHttp.Response r = fleet.http.send(get(path, token), TIMEOUT);
                // open means no token is needed; a token that is sent is still checked
                assertThat(r.status())
                        .as(path + " as " + caller + ": " + r)
                        .isEqualTo(caller == Caller.INVALID ? 401 : 200);
            }
            for (String path : List.of("/actuator/prometheus", "/v3/api-docs")) {
                RawHttp.Response r = fleet.http.send(get(path, token), TIMEOUT);
                if (caller.role() == null) {
                    assertThat(r.status()).as(path + " as " + caller + ": " + r).isEqualTo(401);
                    assertThat(r.isProblem()).as(r.toString()).isTrue();
                } else {
                    assertThat(r.status()).as(path + " as " + caller + ": " + r).isEqualTo(200);
                }
            }
        }
    }

    private static RawHttp.Request get(String path, String token) {
        RawHttp.Request r = RawHttp.Request.of("GET", path, "probe");
        return token == null ? r : r.header("Authorization", "Bearer " + token);
    }

    /** The caller's token; for INVALID one of the invalid ones in turn; for NONE null. */
    private static String token(Caller caller, int turn) {
        if (caller == Caller.NONE) {
            return null;
        }
        if (caller == Caller.INVALID) {
            List<String> invalid = fleet.invalidTokens.stream()
                    .filter(t -> !t.isEmpty() && !t.contains(" "))
                    .toList();
            return invalid.get(turn % invalid.size());
        }
        return fleet.tokens.get(caller);
    }

    private static void writeMatrix(Map<String, Map<Caller, Integer>> observed, int refused) throws Exception {
        StringBuilder b = new StringBuilder("# Authorization matrix (observed statuses)\n\n");
        b.append("Refused calls: ").append(refused).append(", compared against the database before and after.\n\n");
        b.append("| operation |");
        for (Caller c : Caller.values()) {
            b.append(' ').append(c).append(" |");
        }
        b.append("\n|---|");
        b.append("---|".repeat(Caller.values().length)).append('\n');
        new java.util.TreeMap<>(observed).forEach((op, row) -> {
            b.append("| `").append(op).append("` |");
            for (Caller c : Caller.values()) {
                b.append(' ').append(row.getOrDefault(c, 0)).append(" |");
            }
            b.append('\n');
        });
        Path out = Path.of("target", "authorization-matrix.md");
        Files.createDirectories(out.getParent());
        Files.write(out, b.toString().getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }
}
