package io.kvreuse.system;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.testkit.KvReuseClient;
import io.kvreuse.testkit.Requests;
import io.kvreuse.testkit.SampleContracts;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/**
 * A restarted control plane rebuilds its prefix index from PostgreSQL and answers routers as it did
 * before, without asking engines for their inventories again.
 */
class IndexRestartSystemTests {

    @TempDir
    Path home;

    @Test
    void donorSelectionAnswersTheSameAfterARestart() throws Exception {
        Map<String, String> env = Map.of("KVREUSE_LIVENESS_SUSPECTAFTER", "10m", "KVREUSE_LIVENESS_LOSTAFTER", "20m");
        String host = "host-" + UUID.randomUUID();
        long[] chain = ThreadLocalRandom.current().longs(40).toArray();
        List<String> request = new ArrayList<>();
        for (long h : chain) {
            request.add(Long.toUnsignedString(h));
        }
        request.add("12345");
        String operator;
        String router;
        String targetId;
        JsonNode before;
        JsonNode missBefore;
        try (KvReuseProcess kvreuse = KvReuseProcess.startEmbedded(home, env)) {
            KvReuseClient api = new KvReuseClient(kvreuse.baseUrl());
            operator = Files.readString(home.resolve("bootstrap-token")).strip();
            router = mint(api, operator, "ROUTER", "router-a");
            enableReuse(api, operator);
            String domain = api.post("/api/v1/domains", operator, SampleContracts.llamaTp2())
                    .json()
                    .get("domainId")
                    .asString();

            String decodeToken = mint(api, operator, "ENGINE", "decode-a");
            String decodeId = register(api, decodeToken, "DECODE", domain, host, 0);
            heartbeat(api, decodeToken, decodeId);
            var bank = api.post(
                    "/api/v1/incarnations/" + decodeId + "/banks",
                    decodeToken,
                    Map.of(
                            "capacityBlocks",
                            128,
                            "parts",
                            List.of(
                                    Map.of("rank", 0, "regionRef", "shm://a0", "bytesPerBlock", 1048576),
                                    Map.of("rank", 1, "regionRef", "shm://a1", "bytesPerBlock", 1048576))));
            assertThat(bank.status()).as(bank.toString()).isEqualTo(201);
            String bankId = bank.json().get("bankId").asString();
            for (int rank = 0; rank < 2; rank++) {
                assertThat(api.post("/api/v1/banks/" + bankId + "/parts/" + rank + "/ready", decodeToken, Map.of())
                                .status())
                        .isEqualTo(200);
                var stored = api.post(
                        "/api/v1/banks/" + bankId + "/events",
                        decodeToken,
                        Map.of("rank", rank, "firstEventId", 1, "events", List.of(Requests.stored(chain, 3))));
                assertThat(stored.status()).as(stored.toString()).isEqualTo(200);
            }
            String prefillToken = mint(api, operator, "ENGINE", "prefill-a");
            targetId = register(api, prefillToken, "PREFILL", domain, host, 2);
            heartbeat(api, prefillToken, targetId);

            before = awaitHint(api, router, targetId, request);
            missBefore = select(api, router, targetId, List.of("1", "2", "3", "4", "5"));
        }

        try (KvReuseProcess restarted = KvReuseProcess.startEmbedded(home, env)) {
            KvReuseClient api = new KvReuseClient(restarted.baseUrl());
            // the deadline counts from arrival: a cold JVM's first answers may be DEADLINE, never another no-hint
            JsonNode after = select(api, router, targetId, request);
            for (int i = 0; i < 200 && isDeadline(after); i++) {
                Thread.sleep(25);
                after = select(api, router, targetId, request);
            }
            assertThat(after.get("decision").asString()).as(after.toString()).isEqualTo("HINT");
            JsonNode p0 = before.get("hint").get("actions").get(0).get("payload");
            JsonNode p1 = after.get("hint").get("actions").get(0).get("payload");
            for (String field : List.of(
                    "fetch_blocks", "local_prefix_blocks", "block_hashes", "source_slot_runs", "domain_id", "parts")) {
                assertThat(p1.get(field)).as(field).isEqualTo(p0.get(field));
            }
            assertThat(p1.get("source").get("bank_id"))
                    .isEqualTo(p0.get("source").get("bank_id"));
            assertThat(p1.get("lease_id")).isNotEqualTo(p0.get("lease_id"));
            assertThat(select(api, router, targetId, List.of("1", "2", "3", "4", "5"))
                            .get("reason"))
                    .isEqualTo(missBefore.get("reason"));
        }
    }

    private static boolean isDeadline(JsonNode answer) {
        return answer.get("decision").asString().equals("NO_HINT")
                && answer.path("reason").asString().equals("DEADLINE");
    }

    private static JsonNode awaitHint(KvReuseClient api, String router, String targetId, List<String> request)
            throws Exception {
        JsonNode answer = null;
        for (int i = 0; i < 200; i++) {
            answer = select(api, router, targetId, request);
            if (answer.get("decision").asString().equals("HINT")) {
                return answer;
            }
            Thread.sleep(25);
        }
        throw new AssertionError("no hint before the restart: " + answer);
    }

    private static JsonNode select(KvReuseClient api, String router, String targetId, List<String> hashes)
            throws Exception {
        var r = api.post(
                "/api/v1/donor-selections",
                router,
                Map.of(
                        "requestId",
                        "req-" + UUID.randomUUID(),
                        "targetIncarnationId",
                        targetId,
                        "seqHashes",
                        hashes,
                        "localPrefixBlocks",
                        4));
        assertThat(r.status()).as(r.toString()).isEqualTo(200);
        return r.json();
    }

    private static void enableReuse(KvReuseClient api, String operator) throws Exception {
        var current = api.get("/api/v1/settings/reuse", operator).json();
        Map<String, Object> doc = KvReuseClient.JSON.convertValue(current, Map.class);
        doc.remove("version");
        doc.put("enabled", true);
        doc.put("minGainMs", 0.0);
        doc.put("minGainRatio", 0.0);
        doc.put("minFetchBlocks", 1);
        var put = api.put("/api/v1/settings/reuse", operator, doc);
        assertThat(put.status()).as(put.toString()).isEqualTo(200);
    }

    private static String mint(KvReuseClient api, String operator, String role, String subject) throws Exception {
        var r = api.post(
                "/api/v1/tokens", operator, Map.of("role", role, "subject", subject + "-" + UUID.randomUUID()));
        assertThat(r.status()).as(r.toString()).isEqualTo(201);
        return r.json().get("token").asString();
    }

    private static String register(
            KvReuseClient api, String token, String role, String domain, String host, int firstGpu) throws Exception {
        var r = api.post(
                "/api/v1/incarnations",
                token,
                Map.of(
                        "role",
                        role,
                        "domainId",
                        domain,
                        "hostId",
                        host,
                        "controlEndpoint",
                        "tcp://" + host + ":" + (5557 + firstGpu),
                        "capabilities",
                        List.of("kv.fetch_gpu@1.0"),
                        "ranks",
                        List.of(
                                Map.of("rank", 0, "gpuOrdinal", firstGpu, "gpuUuid", "GPU-" + UUID.randomUUID()),
                                Map.of("rank", 1, "gpuOrdinal", firstGpu + 1, "gpuUuid", "GPU-" + UUID.randomUUID()))));
        assertThat(r.status()).as(r.toString()).isEqualTo(201);
        return r.json().get("incarnationId").asString();
    }

    private static void heartbeat(KvReuseClient api, String token, String id) throws Exception {
        var r = api.post("/api/v1/incarnations/" + id + "/heartbeat", token, Map.of());
        assertThat(r.status()).as(r.toString()).isEqualTo(200);
    }
}
