package io.kvreuse.domain;

import static io.kvreuse.domain.Contracts.valid;
import static io.kvreuse.domain.Contracts.with;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.security.Role;
import io.kvreuse.support.IntegrationTest;
import io.kvreuse.support.TestTokens;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.MediaType;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.test.web.reactive.server.WebTestClient;

@IntegrationTest
class DomainApiIntegrationTests {

    private static final String PROBLEMS = "https://kvreuse.io/problems/";

    @Autowired
    WebTestClient http;

    @Autowired
    TestTokens tokens;

    @Autowired
    DatabaseClient db;

    @Test
    void certifyThenRepeatReturnsSameIdWith200() {
        Map<String, Object> contract = valid();
        var first = post(contract)
                .expectStatus()
                .isCreated()
                .expectHeader()
                .value("Location", l -> assertThat(l).startsWith("/api/v1/domains/ld-"))
                .expectBody(Map.class)
                .returnResult()
                .getResponseBody();
        assertThat(first).containsEntry("status", "CERTIFIED").containsEntry("tpSize", 2);
        assertThat(first.get("domainId").toString()).matches("ld-[0-9a-f]{64}");
        var second = post(contract)
                .expectStatus()
                .isOk()
                .expectBody(Map.class)
                .returnResult()
                .getResponseBody();
        assertThat(second).isEqualTo(first);
    }

    @Test
    void certifyWhenAnyFieldChangesThenDifferentId() {
        Map<String, Object> base = valid();
        Set<String> ids = new HashSet<>();
        ids.add(Contracts.certify(http, tokens.operator(), base));
        ids.add(Contracts.certify(http, tokens.operator(), with(base, "engineVersion", "0.11.1")));
        ids.add(Contracts.certify(http, tokens.operator(), with(base, "blockSizeTokens", 32)));
        ids.add(Contracts.certify(http, tokens.operator(), with(base, "kvLayout", "HND")));
        ids.add(Contracts.certify(http, tokens.operator(), with(base, "kvQuantScheme", "fp8-e4m3")));
        ids.add(Contracts.certify(http, tokens.operator(), with(base, "transportClass", "GPU_MNNVL")));
        ids.add(Contracts.certify(http, tokens.operator(), with(base, "extra", Map.of("loraSalt", "ns-1"))));
        assertThat(ids).hasSize(7);
    }

    @Test
    void certifyNormalisesWhitespaceAndExtraOrderToOneId() {
        Map<String, Object> base = with(valid(), "extra", ordered("a", "1", "b", "2"));
        String id = Contracts.certify(http, tokens.operator(), base);
        Map<String, Object> respelt = with(base, "engine", "  vllm ");
        respelt.put("extra", ordered("b", " 2", "a", "1"));
        respelt.put("kvQuantScheme", "  ");
        post(respelt).expectStatus().isOk().expectBody().jsonPath("$.domainId").isEqualTo(id);
    }

    @Test
    void certifyWhenFieldMissingThenInvalidRequestAndNothingStored() {
        Map<String, Object> contract = valid();
        contract.remove("hashFormat");
        expectProblem(post(contract), 400, "invalid-request")
                .jsonPath("$.errors[0].field")
                .isEqualTo("hashFormat");
        assertNotStored(contract);
    }

    @ParameterizedTest
    @CsvSource({
        "numLayers, 0",
        "numLayers, 1025",
        "numKvHeads, 0",
        "headDim, 4097",
        "blockSizeTokens, 0",
        "blockSizeTokens, 4097",
        "bytesPerBlockPerRank, 1073741825",
        "tpSize, 65",
        "tpSize, 0",
        "dpSize, 0"
    })
    void certifyWhenOutOfRangeThenInvalidRequest(String field, long value) {
        Map<String, Object> contract = with(valid(), field, value);
        expectProblem(post(contract), 400, "invalid-request")
                .jsonPath("$.errors[0].field")
                .isEqualTo(field);
        assertNotStored(contract);
    }

    @Test
    void certifyWithBlankExtraKeyOrNullExtraValueThenInvalidRequest() {
        Map<String, Object> blankKey = with(valid(), "extra", Map.of(" ", "x"));
        expectProblem(post(blankKey), 400, "invalid-request");
        Map<String, Object> withNull = valid();
        String json = new tools.jackson.databind.json.JsonMapper()
                .writeValueAsString(withNull)
                .replaceFirst("\\}$", ",\"extra\":{\"loraSalt\":null}}");
        assertThat(json).contains("\"loraSalt\":null");
        expectProblem(
                        http.post()
                                .uri("/api/v1/domains")
                                .header("Authorization", "Bearer " + tokens.operator())
                                .contentType(MediaType.APPLICATION_JSON)
                                .bodyValue(json)
                                .exchange(),
                        400,
                        "invalid-request")
                .jsonPath("$.errors[0].field")
                .value(f -> assertThat((String) f).startsWith("extra"));
        expectProblem(post(with(valid(), "extra", Map.of("a", "1", " a", "2"))), 400, "duplicate-extra-key");
        assertNotStored(blankKey);
        assertNotStored(withNull);
    }

    @ParameterizedTest
    @CsvSource({
        "dpSize, 2, parallelism-not-supported",
        "ppSize, 2, parallelism-not-supported",
        "cpSize, 4, parallelism-not-supported",
        "numKvHeads, 3, tp-must-divide-kv-heads"
    })
    void certifyWhenRuleBrokenThenRefused(String field, int value, String slug) {
        Map<String, Object> contract = with(valid(), field, value);
        expectProblem(post(contract), 422, slug);
        assertNotStored(contract);
    }

    @Test
    void certifyCpuTransportWithTpAboveOneThenRefused() {
        Map<String, Object> contract = with(valid(), "transportClass", "CPU_TP1");
        expectProblem(post(contract), 422, "cpu-transport-requires-tp1")
                .jsonPath("$.tpSize")
                .isEqualTo(2);
        assertNotStored(contract);
    }

    @Test
    void certifyWhenTpExceedsKvHeadsThenRefusedUnlessModelReplicatesHeads() {
        Map<String, Object> contract = with(with(valid(), "numKvHeads", 2), "tpSize", 4);
        expectProblem(post(contract), 422, "tp-must-divide-kv-heads");
        Contracts.certify(http, tokens.operator(), with(contract, "extra", Map.of("headPartition", "replicate")));
        Map<String, Object> uneven = with(with(valid(), "numKvHeads", 3), "tpSize", 4);
        expectProblem(
                post(with(uneven, "extra", Map.of("headPartition", "replicate"))), 422, "tp-must-divide-kv-heads");
    }

    @Test
    void certifyWhenHeadPartitionUnknownThenRefused() {
        Map<String, Object> contract = with(valid(), "extra", Map.of("headPartition", "shard-by-magic"));
        expectProblem(post(contract), 422, "head-partition-not-supported");
        assertNotStored(contract);
    }

    @ParameterizedTest
    @CsvSource({"tpResharding, true", "transform, nhd-to-hnd", "LayoutConversion, yes", "transform.kv, fp8"})
    void certifyGpuContractWithTransformThenRefused(String key, String value) {
        Map<String, Object> contract = with(valid(), "extra", Map.of(key, value));
        expectProblem(post(contract), 422, "transform-not-supported")
                .jsonPath("$.extraKey")
                .isEqualTo(key);
        assertNotStored(contract);
    }

    @Test
    void certifyGpuContractWithTransformMarkerOffThenCertified() {
        Contracts.certify(http, tokens.operator(), with(valid(), "extra", Map.of("tpResharding", "false")));
    }

    @Test
    void certifyCpuContractMayCarryTransform() {
        Map<String, Object> cpu = with(with(valid(), "transportClass", "CPU_TP1"), "tpSize", 1);
        Contracts.certify(http, tokens.operator(), with(cpu, "extra", Map.of("transform", "nhd-to-hnd")));
    }

    @Test
    void certifyWhenMixingCpuAndGpuTransportThenRefused() {
        Map<String, Object> gpu = with(valid(), "extra", Map.of("fallbackTransport", "cpu_tp1"));
        expectProblem(post(gpu), 422, "mixed-transport-not-supported");
        Map<String, Object> cpu = with(with(valid(), "transportClass", "CPU_TP1"), "tpSize", 1);
        expectProblem(
                post(with(cpu, "extra", Map.of("transports", "CPU_TP1,GPU_CUDA_IPC"))),
                422,
                "mixed-transport-not-supported");
        assertNotStored(gpu);
    }

    @Test
    void certifyWithUnknownFieldOrEnumThenMalformed() {
        Map<String, Object> misspelt = with(valid(), "tpSzie", 4);
        expectProblem(post(misspelt), 400, "unknown-field")
                .jsonPath("$.fields[0]")
                .isEqualTo("tpSzie");
        assertNotStored(misspelt);
        expectProblem(post(with(valid(), "transportClass", "GPU_PIGEON")), 400, "malformed-request");
    }

    @Test
    void concurrentCertificationsOfOneContractAgreeOnOneDomain() {
        Map<String, Object> contract = valid();
        List<Integer> statuses = new java.util.concurrent.CopyOnWriteArrayList<>();
        Set<Object> ids = java.util.concurrent.ConcurrentHashMap.newKeySet();
        reactor.core.publisher.Flux.range(0, 10)
                .flatMap(
                        i -> org.springframework.web.reactive.function.client.WebClient.create(baseUrl())
                                .post()
                                .uri("/api/v1/domains")
                                .header("Authorization", "Bearer " + tokens.operator())
                                .bodyValue(contract)
                                .exchangeToMono(r -> {
                                    statuses.add(r.statusCode().value());
                                    return r.bodyToMono(Map.class);
                                })
                                .doOnNext(body -> ids.add(body.get("domainId"))),
                        10)
                .blockLast(java.time.Duration.ofSeconds(30));
        assertThat(statuses).hasSize(10);
        assertThat(statuses.stream().filter(s -> s == 201)).hasSize(1);
        assertThat(statuses.stream().filter(s -> s == 200)).hasSize(9);
        assertThat(ids).hasSize(1);
        assertThat(auditCount(ids.iterator().next().toString(), "DOMAIN_CERTIFIED"))
                .isEqualTo(1);
    }

    @Test
    void revokeKeepsDomainReadableIsIdempotentAndAudited() {
        String id = Contracts.certify(http, tokens.operator(), valid());
        String router = tokens.mint(Role.ROUTER);
        revoke(id, Map.of("reason", "drift found by engine")).expectStatus().isOk();
        var first = http.get()
                .uri("/api/v1/domains/{id}", id)
                .header("Authorization", "Bearer " + router)
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody(Map.class)
                .returnResult()
                .getResponseBody();
        assertThat(first)
                .containsEntry("status", "REVOKED")
                .containsEntry("revokeReason", "drift found by engine")
                .containsEntry("revokedBy", "operator:bootstrap");
        revoke(id, Map.of("reason", "again"))
                .expectStatus()
                .isOk()
                .expectBody(Map.class)
                .isEqualTo(first);
        assertThat(auditCount(id, "DOMAIN_CERTIFIED")).isEqualTo(1);
        assertThat(auditCount(id, "DOMAIN_REVOKED")).isEqualTo(1);
        assertThat(db.sql("SELECT actor, reason FROM audit_event WHERE subject_id = :id AND action = 'DOMAIN_REVOKED'")
                        .bind("id", id)
                        .fetch()
                        .one()
                        .block())
                .containsEntry("actor", "operator:bootstrap")
                .containsEntry("reason", "drift found by engine");
    }

    @Test
    void certifyRevokedContractAgainThenRefused() {
        Map<String, Object> contract = valid();
        String id = Contracts.certify(http, tokens.operator(), contract);
        revoke(id, Map.of("reason", "bad")).expectStatus().isOk();
        expectProblem(post(contract), 422, "domain-revoked")
                .jsonPath("$.domainId")
                .isEqualTo(id);
    }

    @Test
    void revokeWithoutReasonThenInvalidAndStillCertified() {
        String id = Contracts.certify(http, tokens.operator(), valid());
        expectProblem(revoke(id, Map.of("reason", " ")), 400, "invalid-request");
        expectProblem(revoke(id, Map.of()), 400, "invalid-request");
        http.get()
                .uri("/api/v1/domains/{id}", id)
                .header("Authorization", "Bearer " + tokens.operator())
                .exchange()
                .expectBody()
                .jsonPath("$.status")
                .isEqualTo("CERTIFIED");
    }

    @Test
    void unknownDomainThenNotFound() {
        expectProblem(
                http.get()
                        .uri("/api/v1/domains/ld-" + "0".repeat(64))
                        .header("Authorization", "Bearer " + tokens.operator())
                        .exchange(),
                404,
                "domain-not-found");
        expectProblem(
                http.get()
                        .uri("/api/v1/domains/not-an-id")
                        .header("Authorization", "Bearer " + tokens.operator())
                        .exchange(),
                404,
                "domain-not-found");
        expectProblem(revoke("ld-" + "f".repeat(64), Map.of("reason", "x")), 404, "domain-not-found");
    }

    @Test
    void listFiltersByModelStatusAndTransport() {
        Map<String, Object> a = valid();
        String model = a.get("modelId").toString();
        String ipc = Contracts.certify(http, tokens.operator(), a);
        String mnnvl = Contracts.certify(http, tokens.operator(), with(a, "transportClass", "GPU_MNNVL"));
        revoke(mnnvl, Map.of("reason", "test")).expectStatus().isOk();
        assertThat(listIds("?modelId=" + model)).containsExactlyInAnyOrder(ipc, mnnvl);
        assertThat(listIds("?modelId=" + model + "&status=CERTIFIED")).containsExactly(ipc);
        assertThat(listIds("?modelId=" + model + "&transportClass=GPU_MNNVL")).containsExactly(mnnvl);
        expectProblem(
                http.get()
                        .uri("/api/v1/domains?status=MAYBE")
                        .header("Authorization", "Bearer " + tokens.operator())
                        .exchange(),
                400,
                "invalid-parameter");
    }

    @Test
    void onlyOperatorsCertifyAndAnyRoleReads() {
        http.post()
                .uri("/api/v1/domains")
                .contentType(MediaType.APPLICATION_JSON)
                .bodyValue(valid())
                .exchange()
                .expectStatus()
                .isUnauthorized();
        Map<String, Object> contract = valid();
        expectProblem(
                http.post()
                        .uri("/api/v1/domains")
                        .header("Authorization", "Bearer " + tokens.mint(Role.ENGINE))
                        .contentType(MediaType.APPLICATION_JSON)
                        .bodyValue(contract)
                        .exchange(),
                403,
                "forbidden");
        assertNotStored(contract);
        String id = Contracts.certify(http, tokens.operator(), valid());
        expectProblem(
                http.post()
                        .uri("/api/v1/domains/{id}/revoke", id)
                        .header("Authorization", "Bearer " + tokens.mint(Role.ROUTER))
                        .contentType(MediaType.APPLICATION_JSON)
                        .bodyValue(Map.of("reason", "x"))
                        .exchange(),
                403,
                "forbidden");
        http.get()
                .uri("/api/v1/domains/{id}", id)
                .header("Authorization", "Bearer " + tokens.mint(Role.AGENT))
                .exchange()
                .expectStatus()
                .isOk();
    }

    @Autowired
    org.springframework.core.env.Environment env;

    private String baseUrl() {
        return "http://localhost:" + env.getProperty("local.server.port");
    }

    private WebTestClient.ResponseSpec post(Map<String, Object> contract) {
        return http.post()
                .uri("/api/v1/domains")
                .header("Authorization", "Bearer " + tokens.operator())
                .contentType(MediaType.APPLICATION_JSON)
                .bodyValue(contract)
                .exchange();
    }

    private WebTestClient.ResponseSpec revoke(String id, Map<String, Object> body) {
        return http.post()
                .uri("/api/v1/domains/{id}/revoke", id)
                .header("Authorization", "Bearer " + tokens.operator())
                .contentType(MediaType.APPLICATION_JSON)
                .bodyValue(body)
                .exchange();
    }

    static WebTestClient.BodyContentSpec expectProblem(WebTestClient.ResponseSpec response, int status, String slug) {
        return response.expectStatus()
                .isEqualTo(status)
                .expectHeader()
                .contentType(MediaType.APPLICATION_PROBLEM_JSON)
                .expectBody()
                .jsonPath("$.type")
                .isEqualTo(PROBLEMS + slug);
    }

    private void assertNotStored(Map<String, Object> contract) {
        Object model = contract.get("modelId");
        Long n = db.sql("SELECT count(*) AS n FROM layout_domain WHERE model_id = :m")
                .bind("m", String.valueOf(model))
                .map((row, meta) -> row.get("n", Long.class))
                .one()
                .block();
        assertThat(n).isZero();
    }

    private long auditCount(String subjectId, String action) {
        return db.sql("SELECT count(*) AS n FROM audit_event WHERE subject_id = :id AND action = :action")
                .bind("id", subjectId)
                .bind("action", action)
                .map((row, meta) -> row.get("n", Long.class))
                .one()
                .block();
    }

    @SuppressWarnings("unchecked")
    private List<String> listIds(String query) {
        List<Map<String, Object>> body = http
                .get()
                .uri("/api/v1/domains" + query)
                .header("Authorization", "Bearer " + tokens.operator())
                .exchange()
                .expectStatus()
                .isOk()
                .expectBodyList(Map.class)
                .returnResult()
                .getResponseBody()
                .stream()
                .map(m -> (Map<String, Object>) m)
                .toList();
        return body.stream().map(m -> m.get("domainId").toString()).toList();
    }

    private static Map<String, String> ordered(String... kv) {
        Map<String, String> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put(kv[i], kv[i + 1]);
        }
        return m;
    }
}
