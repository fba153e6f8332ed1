package io.kvreuse.system;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.testkit.Answer;
import io.kvreuse.testkit.KvReuseClient;
import io.kvreuse.testkit.SampleContracts;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/**
 * Engines that register ready on one replica, the donor with its bank ready, are chosen by
 * another replica's selection without a single heartbeat or part-ready call: the second replica
 * learns of them only through the database.
 */
class ReadyRegistrationReplicasSystemTests {

    @TempDir
    Path home;

    @Test
    void aReadyRegistrationOnOneReplicaIsSelectedByAnother() throws Exception {
        String operator = "kvr_system-" + UUID.randomUUID();
        try (EmbeddedPostgres pg = EmbeddedPostgres.builder().start()) {
            Map<String, String> env = Map.of(
                    "KVREUSE_DB_URL",
                    "jdbc:postgresql://localhost:" + pg.getPort() + "/postgres",
                    "KVREUSE_DB_USER",
                    "postgres",
                    "KVREUSE_DB_PASSWORD",
                    "postgres",
                    "KVREUSE_BOOTSTRAP_TOKEN",
                    operator);
            try (KvReuseProcess a = KvReuseProcess.start(home.resolve("a"), env);
                    KvReuseProcess b = KvReuseProcess.start(home.resolve("b"), env)) {
                KvReuseClient first = new KvReuseClient(a.baseUrl());
                KvReuseClient second = new KvReuseClient(b.baseUrl());
                String host = "host-" + UUID.randomUUID();
                String engine = SystemFleet.mint(first, operator, "ENGINE", "engine");
                String router = SystemFleet.mint(first, operator, "ROUTER", "router");
                Map<String, Object> contract = new LinkedHashMap<>(SampleContracts.llamaTp2());
                contract.put("tpSize", 1);
                contract.put("modelId", "system-" + UUID.randomUUID());
                String domain = status(first.post("/api/v1/domains", operator, contract), 201)
                        .get("domainId")
                        .asString();
                long bytesPerBlock = contract.get("bytesPerBlockPerRank") instanceof Number n ? n.longValue() : 0;
                enableReuse(first, operator);

                Map<String, Object> donor = registration("DECODE", domain, host, 0);
                donor.put(
                        "bank",
                        Map.of(
                                "capacityBlocks",
                                64,
                                "parts",
                                List.of(Map.of(
                                        "rank",
                                        0,
                                        "regionRef",
                                        "shm://bank-" + UUID.randomUUID(),
                                        "bytesPerBlock",
                                        bytesPerBlock,
                                        "ready",
                                        true))));
                JsonNode donorAnswer = status(first.post("/api/v1/incarnations", engine, donor), 201);
                assertThat(donorAnswer.get("state").asString()).isEqualTo("READY");
                assertThat(donorAnswer.get("fencingEpoch").asLong()).isEqualTo(2);
                String donorId = donorAnswer.get("incarnationId").asString();
                String bankId = donorAnswer.get("bankId").asString();
                List<String> chain = storeChain(first, engine, bankId, 8);

                JsonNode targetAnswer = status(
                        first.post("/api/v1/incarnations", engine, registration("PREFILL", domain, host, 1)), 201);
                assertThat(targetAnswer.get("state").asString()).isEqualTo("READY");
                assertThat(targetAnswer.has("bankId")).isFalse();
                String targetId = targetAnswer.get("incarnationId").asString();

                // the other replica: no heartbeat was ever sent, to either replica
                long start = System.nanoTime();
                JsonNode answer = null;
                while (System.nanoTime() - start < 15_000_000_000L) {
                    answer = status(
                            second.post(
                                    "/api/v1/donor-selections",
                                    router,
                                    Map.of(
                                            "requestId",
                                            "req-" + UUID.randomUUID(),
                                            "targetIncarnationId",
                                            targetId,
                                            "seqHashes",
                                            chain,
                                            "localPrefixBlocks",
                                            0,
                                            "deadlineMs",
                                            5_000)),
                            200);
                    if ("HINT".equals(answer.get("decision").asString())) {
                        break;
                    }
                    Thread.sleep(50);
                }
                assertThat(answer.get("decision").asString())
                        .as(answer.toString())
                        .isEqualTo("HINT");
                JsonNode payload = answer.get("hint").get("actions").get(0).get("payload");
                assertThat(payload.get("source").get("incarnation_id").asString())
                        .isEqualTo(donorId);
                assertThat(payload.get("source").get("fencing_epoch").asLong()).isEqualTo(2);
                assertThat(payload.get("source").get("bank_id").asString()).isEqualTo(bankId);
                assertThat(payload.get("target").get("incarnation_id").asString())
                        .isEqualTo(targetId);
                assertThat(payload.get("target").get("fencing_epoch").asLong()).isEqualTo(2);
                assertThat(payload.get("fetch_blocks").asInt()).isEqualTo(8);
                System.out.printf(
                        "ready registration: the other replica answered HINT %.0f ms after the target's registration%n",
                        (System.nanoTime() - start) / 1e6);
            }
        }
    }

    private static Map<String, Object> registration(String role, String domain, String host, int gpu) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("stableName", role.toLowerCase() + "-" + UUID.randomUUID());
        body.put("role", role);
        body.put("domainId", domain);
        body.put("hostId", host);
        body.put("controlEndpoint", "tcp://" + host + ":" + (5557 + gpu));
        body.put("capabilities", List.of("kv.fetch_gpu@1.0"));
        body.put("ranks", List.of(Map.of("rank", 0, "gpuOrdinal", gpu, "gpuUuid", "GPU-" + UUID.randomUUID())));
        body.put("ready", true);
        return body;
    }

    private static List<String> storeChain(KvReuseClient api, String engine, String bankId, int length)
            throws Exception {
        List<String> chain = new ArrayList<>();
        List<Map<String, Object>> blocks = new ArrayList<>();
        Random r = new Random();
        for (int i = 0; i < length; i++) {
            chain.add(Long.toUnsignedString(r.nextLong()));
            Map<String, Object> block = new LinkedHashMap<>(Map.of("seqHash", chain.get(i), "position", i, "slot", i));
            if (i > 0) {
                block.put("parentHash", chain.get(i - 1));
            }
            blocks.add(block);
        }
        status(
                api.post(
                        "/api/v1/banks/" + bankId + "/events",
                        engine,
                        Map.of(
                                "rank",
                                0,
                                "firstEventId",
                                1,
                                "events",
                                List.of(Map.of("type", "STORED", "blocks", blocks)))),
                200);
        return chain;
    }

    @SuppressWarnings("unchecked")
    private static void enableReuse(KvReuseClient api, String operator) throws Exception {
        Map<String, Object> s = KvReuseClient.JSON.convertValue(
                api.get("/api/v1/settings/reuse", operator).json(), Map.class);
        s.remove("version");
        s.putAll(Map.of("enabled", true, "minFetchBlocks", 1, "minGainMs", 0, "minGainRatio", 0));
        status(api.put("/api/v1/settings/reuse", operator, s), 200);
    }

    private static JsonNode status(Answer r, int expected) {
        assertThat(r.status()).as(r.toString()).isEqualTo(expected);
        return r.json();
    }
}
