package io.kvreuse.system;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.testkit.Answer;
import io.kvreuse.testkit.KvReuseClient;
import io.kvreuse.testkit.SampleContracts;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import tools.jackson.databind.JsonNode;

/**
 * One control plane of the built jar on a PostgreSQL of the test JVM, with a small fleet built
 * through the API so that every operation has real ids to address: a domain, tokens of every role,
 * two engines (one owning a decode and a prefill incarnation on host A, one owning an incarnation
 * on host B), a published bank with events, both hosts' agents, a transferring lease with its order
 * and a proposed one.
 *
 * <p>Background clocks are pushed out (liveness after an hour, proposals live ten minutes, the
 * longest allowed; transfers an hour) so that nothing changes the database while a test compares
 * it before and after.
 */
final class PopulatedFleet implements AutoCloseable {

    final String hostA = "host-a-" + UUID.randomUUID();
    final String hostB = "host-b-" + UUID.randomUUID();
    final String operator = "kvr_fuzz-" + UUID.randomUUID();
    final EmbeddedPostgres pg;
    final KvReuseProcess app;
    final KvReuseClient api;
    final RawHttp http;
    final Map<Caller, String> tokens = new EnumMap<>(Caller.class);
    /** Tokens that must all be refused: revoked, unknown, malformed. */
    final List<String> invalidTokens = new ArrayList<>();
    /** Real ids and values by the parameter or field name the API gives them. */
    final Map<String, Object> ids = new LinkedHashMap<>();

    String domainId;
    String decodeId;
    String prefillId;
    String foreignIncarnationId;
    String bankId;
    long decodeEpoch;
    long prefillEpoch;
    long agentEpoch;
    List<String> chain = new ArrayList<>();

    private PopulatedFleet(EmbeddedPostgres pg, KvReuseProcess app) {
        this.pg = pg;
        this.app = app;
        this.api = new KvReuseClient(app.baseUrl());
        this.http = new RawHttp(app.baseUrl());
    }

    static PopulatedFleet start(Path home) throws Exception {
        EmbeddedPostgres pg = EmbeddedPostgres.builder().start();
        String operator = "kvr_fuzz-" + UUID.randomUUID();
        Map<String, String> env = new LinkedHashMap<>();
        env.put("KVREUSE_DB_URL", "jdbc:postgresql://localhost:" + pg.getPort() + "/postgres");
        env.put("KVREUSE_DB_USER", "postgres");
        env.put("KVREUSE_DB_PASSWORD", "postgres");
        env.put("KVREUSE_BOOTSTRAP_TOKEN", operator);
        env.put("KVREUSE_LIVENESS_SUSPECTAFTER", "1h");
        env.put("KVREUSE_LIVENESS_LOSTAFTER", "2h");
        env.put("KVREUSE_AGENTS_SUSPECTAFTER", "1h");
        env.put("KVREUSE_AGENTS_OFFLINEAFTER", "2h");
        KvReuseProcess app;
        try {
            app = KvReuseProcess.start(home, env);
        } catch (Exception e) {
            pg.close();
            throw e;
        }
        PopulatedFleet f = new PopulatedFleet(pg, app);
        try {
            f.build(operator);
        } catch (Throwable e) {
            String log = app.tail();
            f.close();
            throw new AssertionError("could not build the fleet: " + e.getMessage() + "\nlog:\n" + log, e);
        }
        return f;
    }

    private void build(String operatorToken) throws Exception {
        tokens.put(Caller.OPERATOR, operatorToken);
        tokens.put(
                Caller.ROUTER,
                mint("ROUTER", "router-" + UUID.randomUUID()).get("token").asString());
        // engine tokens scoped to their host, agent tokens bound to theirs
        tokens.put(Caller.ENGINE, token("ENGINE", "engine-a-" + UUID.randomUUID(), hostA));
        tokens.put(Caller.FOREIGN_ENGINE, token("ENGINE", "engine-b-" + UUID.randomUUID(), hostB));
        tokens.put(Caller.AGENT, token("AGENT", hostA, hostA));
        tokens.put(Caller.FOREIGN_AGENT, token("AGENT", hostB, hostB));
        JsonNode revokedToken = mint("ROUTER", "revoked-" + UUID.randomUUID());
        String revoked = revokedToken.get("token").asString();
        RawHttp.Response revocation = http.send(
                RawHttp.Request.of(
                                "DELETE",
                                "/api/v1/tokens/" + revokedToken.get("tokenId").asString(),
                                "revoke")
                        .header("Authorization", "Bearer " + operatorToken),
                java.time.Duration.ofSeconds(30));
        assertThat(revocation.status()).as(revocation.toString()).isIn(200, 204);
        invalidTokens.addAll(List.of(
                revoked,
                "kvr_" + UUID.randomUUID(),
                operatorToken + "x",
                operatorToken.substring(0, operatorToken.length() - 1),
                "",
                "Bearer",
                "a".repeat(4000)));
        // revoked by operators in the tests: never a token the tests themselves use
        String spareId =
                mint("ROUTER", "spare-" + UUID.randomUUID()).get("tokenId").asString();

        Map<String, Object> contract = new LinkedHashMap<>(SampleContracts.llamaTp2());
        contract.put("tpSize", 1);
        contract.put("modelId", "fuzz-" + UUID.randomUUID());
        domainId = created(api.post("/api/v1/domains", operatorToken, contract))
                .get("domainId")
                .asString();
        String engine = tokens.get(Caller.ENGINE);
        decodeId = register(engine, "DECODE", hostA, 0);
        prefillId = register(engine, "PREFILL", hostA, 1);
        foreignIncarnationId = register(tokens.get(Caller.FOREIGN_ENGINE), "DECODE", hostB, 0);
        decodeEpoch = heartbeat(engine, decodeId);
        prefillEpoch = heartbeat(engine, prefillId);
        heartbeat(tokens.get(Caller.FOREIGN_ENGINE), foreignIncarnationId);

        bankId = created(api.post(
                        "/api/v1/incarnations/" + decodeId + "/banks",
                        engine,
                        Map.of(
                                "capacityBlocks",
                                64,
                                "parts",
                                List.of(Map.of("rank", 0, "regionRef", "shm://fuzz-bank", "bytesPerBlock", 1048576)),
                                // so the event-source endpoints have something for their owner to reach
                                "eventSource",
                                Map.of(
                                        "format",
                                        "VLLM_KV_EVENTS",
                                        "allBlocksCleared",
                                        "NATIVE_CACHE_CLEARED",
                                        "ranks",
                                        List.of(Map.of("rank", 0, "endpoint", "tcp://127.0.0.1:9"))))))
                .get("bankId")
                .asString();
        ok(api.post("/api/v1/banks/" + bankId + "/parts/0/ready", engine, Map.of()));
        Random random = new Random();
        List<Map<String, Object>> blocks = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            chain.add(Long.toUnsignedString(random.nextLong()));
            Map<String, Object> block = new LinkedHashMap<>(Map.of("seqHash", chain.get(i), "position", i, "slot", i));
            if (i > 0) {
                block.put("parentHash", chain.get(i - 1));
            }
            blocks.add(block);
        }
        ok(api.post(
                "/api/v1/banks/" + bankId + "/events",
                engine,
                Map.of("rank", 0, "firstEventId", 1, "events", List.of(Map.of("type", "STORED", "blocks", blocks)))));

        Map<String, Object> s = KvReuseClient.JSON.convertValue(
                api.get("/api/v1/settings/reuse", operatorToken).json(), Map.class);
        s.remove("version");
        s.putAll(Map.of(
                "enabled", true,
                "minFetchBlocks", 1,
                "minGainMs", 0,
                "minGainRatio", 0,
                "leaseTtlMs", 600_000,
                "transferDeadlineMs", 3_600_000,
                "abandonDeadlineMs", 7_200_000));
        ok(api.put("/api/v1/settings/reuse", operatorToken, s));

        agentEpoch = agent(tokens.get(Caller.AGENT), hostA);
        agent(tokens.get(Caller.FOREIGN_AGENT), hostB);

        // destinations may name only regions the target registered
        ok(api.post(
                "/api/v1/incarnations/" + prefillId + "/destination-regions",
                engine,
                Map.of(
                        "fencingEpoch",
                        prefillEpoch,
                        "regions",
                        List.of(Map.of("rank", 0, "regionRef", "shm://fuzz-dst", "capacityBlocks", 64)))));
        String transferring = propose();
        ok(api.post(
                "/api/v1/leases/" + transferring + "/destination",
                engine,
                Map.of(
                        "fencingEpoch",
                        prefillEpoch,
                        "ranks",
                        List.of(Map.of("rank", 0, "regionRef", "shm://fuzz-dst", "slots", List.of(List.of(0, 8)))))));
        JsonNode pin = command(engine, decodeId, "PIN");
        ok(api.post(
                "/api/v1/incarnations/" + decodeId + "/commands/"
                        + pin.get("commandId").asString() + "/ack",
                engine,
                Map.of("ok", true, "fencingEpoch", decodeEpoch)));
        String orderId = order();
        String proposed = propose();

        ids.put("id", decodeId);
        ids.put("incarnationId", decodeId);
        ids.put("targetIncarnationId", prefillId);
        ids.put("domainId", domainId);
        ids.put("bankId", bankId);
        ids.put("rank", 0);
        ids.put("hostId", hostA);
        ids.put("leaseId", transferring);
        ids.put("orderId", orderId);
        ids.put("commandId", pin.get("commandId").asString());
        ids.put("tokenId", spareId);
        // a dry-run plan needs an unhealthy incarnation, which needs time: plans are addressed by an unknown id
        ids.put("planId", UUID.randomUUID().toString());
        ids.put("seqHashes", chain);
        ids.put("proposedLeaseId", proposed);
    }

    private String token(String role, String subject, String hostId) throws Exception {
        Map<String, Object> body = new LinkedHashMap<>(Map.of(
                "role", role, "subject", subject, "hostId", hostId, "description", "fuzz and authorization tests"));
        return created(api.post("/api/v1/tokens", tokens.get(Caller.OPERATOR), body))
                .get("token")
                .asString();
    }

    private JsonNode mint(String role, String subject) throws Exception {
        return created(api.post(
                "/api/v1/tokens",
                tokens.get(Caller.OPERATOR),
                Map.of("role", role, "subject", subject, "description", "fuzz and authorization tests")));
    }

    private String register(String token, String role, String host, int gpu) throws Exception {
        return created(api.post(
                        "/api/v1/incarnations",
                        token,
                        Map.of(
                                "role",
                                role,
                                "domainId",
                                domainId,
                                "hostId",
                                host,
                                "controlEndpoint",
                                "tcp://" + host + ":5557",
                                "capabilities",
                                List.of("kv.fetch_gpu@1.0"),
                                "ranks",
                                List.of(Map.of("rank", 0, "gpuOrdinal", gpu, "gpuUuid", "GPU-" + UUID.randomUUID())))))
                .get("incarnationId")
                .asString();
    }

    private long heartbeat(String token, String id) throws Exception {
        Answer r = api.post("/api/v1/incarnations/" + id + "/heartbeat", token, Map.of());
        ok(r);
        return r.json().get("fencingEpoch").asLong();
    }

    private long agent(String token, String host) throws Exception {
        return created(api.post(
                        "/api/v1/agents",
                        token,
                        Map.of(
                                "hostId",
                                host,
                                "gpus",
                                List.of(Map.of("ordinal", 0, "uuid", "GPU-0"), Map.of("ordinal", 1, "uuid", "GPU-1")),
                                "nixlAgents",
                                List.of(Map.of(
                                        "gpuOrdinal",
                                        0,
                                        "name",
                                        "kvreuse@" + host + "/gpu0",
                                        "metadata",
                                        Base64.getEncoder().encodeToString(new byte[] {1, 2, 3}))))))
                .get("agentEpoch")
                .asLong();
    }

    private String propose() throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        JsonNode last = null;
        while (System.nanoTime() < deadline) {
            last = api.post(
                            "/api/v1/donor-selections",
                            tokens.get(Caller.ROUTER),
                            Map.of(
                                    "requestId",
                                    UUID.randomUUID().toString(),
                                    "targetIncarnationId",
                                    prefillId,
                                    "seqHashes",
                                    chain,
                                    "localPrefixBlocks",
                                    0,
                                    "deadlineMs",
                                    5000))
                    .json();
            if ("HINT".equals(last.get("decision").asString())) {
                return last.get("leaseId").asString();
            }
            Thread.sleep(100);
        }
        throw new AssertionError("no hint: " + last);
    }

    private JsonNode command(String token, String incarnation, String type) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < deadline) {
            for (JsonNode c : api.get("/api/v1/incarnations/" + incarnation + "/commands?waitMs=1000", token)
                    .json()) {
                if (type.equals(c.get("type").asString())) {
                    return c;
                }
            }
        }
        throw new AssertionError("no " + type + " command for " + incarnation);
    }

    private String order() throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < deadline) {
            for (JsonNode o : api.get("/api/v1/agents/" + hostA + "/orders?waitMs=1000", tokens.get(Caller.AGENT))
                    .json()) {
                return o.get("orderId").asString();
            }
        }
        throw new AssertionError("no transfer order for " + hostA);
    }

    /** A connection to the database the control plane uses. */
    java.sql.Connection db() throws java.sql.SQLException {
        return pg.getPostgresDatabase().getConnection();
    }

    @Override
    public void close() throws Exception {
        try {
            app.close();
        } finally {
            pg.close();
        }
    }

    private static void ok(Answer r) {
        assertThat(r.status()).as(r.toString()).isEqualTo(200);
    }

    private static JsonNode created(Answer r) {
        assertThat(r.status()).as(r.toString()).isIn(200, 201);
        return r.json();
    }
}
