package io.kvreuse.system;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.testkit.Answer;
import io.kvreuse.testkit.SampleContracts;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import tools.jackson.databind.JsonNode;

/**
 * Plays a churning fleet on one host through HTTP only: each generation registers a decode donor
 * and a prefill target, publishes and resets the donor's bank, runs full lease lifecycles (the
 * driver answers as both engines, the router and the host's agent) and exits both engines cleanly.
 * Every answer of 500 or more is counted: the soak allows none.
 */
final class SoakDriver {

    static final int BLOCKS = 8;
    static final int LEASES_PER_GENERATION = 4;

    private final PgControlPlane cp;
    private final String domain;
    private final String host = "soak-" + UUID.randomUUID();
    private final String donorToken;
    private final String targetToken;
    private final String router;
    private final String agent;
    private final long agentEpoch;
    final AtomicLong serverErrors = new AtomicLong();
    final AtomicLong requests = new AtomicLong();
    long generations;
    long leases;

    SoakDriver(PgControlPlane cp) throws Exception {
        this.cp = cp;
        Map<String, Object> contract = new LinkedHashMap<>(SampleContracts.llamaTp2());
        contract.put("tpSize", 1);
        contract.put("modelId", "soak-" + UUID.randomUUID());
        this.domain = ok(cp.api.post("/api/v1/domains", cp.operator, contract))
                .get("domainId")
                .asString();
        this.donorToken = cp.mint("ENGINE", "soak-decode");
        this.targetToken = cp.mint("ENGINE", "soak-prefill");
        this.router = cp.mint("ROUTER", "soak-router");
        this.agent = cp.mint("AGENT", "soak-agent", host);
        this.agentEpoch = ok(cp.api.post(
                        "/api/v1/agents",
                        agent,
                        Map.of(
                                "hostId",
                                host,
                                "gpus",
                                List.of(Map.of("ordinal", 0, "uuid", "GPU-0"), Map.of("ordinal", 1, "uuid", "GPU-1")),
                                "nixlAgents",
                                List.of(Map.of(
                                        "gpuOrdinal",
                                        1,
                                        "name",
                                        "kvreuse@" + host + "/gpu1",
                                        "metadata",
                                        Base64.getEncoder().encodeToString(new byte[64]))))))
                .get("agentEpoch")
                .asLong();
    }

    /** One generation: two engines born, a bank filled and reset, leases run to RELEASED, both engines exit. */
    void generation() throws Exception {
        Engine donor = new Engine(donorToken, "DECODE", 0);
        Engine target = new Engine(targetToken, "PREFILL", 1);
        // destinations may name only regions the target registered
        ok(call(() -> cp.api.post(
                "/api/v1/incarnations/" + target.id + "/destination-regions",
                targetToken,
                Map.of(
                        "fencingEpoch",
                        target.epoch,
                        "regions",
                        List.of(Map.of("rank", 0, "regionRef", "shm://soak-dst", "capacityBlocks", 1_000_000))))));
        String bank = ok(call(() -> cp.api.post(
                        "/api/v1/incarnations/" + donor.id + "/banks",
                        donorToken,
                        Map.of(
                                "capacityBlocks",
                                64,
                                "parts",
                                List.of(Map.of("rank", 0, "regionRef", "shm://soak", "bytesPerBlock", 1 << 20))))))
                .get("bankId")
                .asString();
        ok(call(() -> cp.api.post("/api/v1/banks/" + bank + "/parts/0/ready", donorToken, Map.of())));
        long[] nextEvent = {1};
        List<String> chain = store(bank, nextEvent);
        for (int i = 0; i < LEASES_PER_GENERATION; i++) {
            if (i == LEASES_PER_GENERATION / 2) {
                ok(call(() -> cp.api.post("/api/v1/banks/" + bank + "/reset", donorToken, Map.of())));
                chain = store(bank, nextEvent);
            }
            lease(donor, target, chain, i);
        }
        ok(call(() -> cp.api.post("/api/v1/incarnations/" + donor.id + "/exit", donorToken, Map.of())));
        ok(call(() -> cp.api.post("/api/v1/incarnations/" + target.id + "/exit", targetToken, Map.of())));
        generations++;
    }

    private void lease(Engine donor, Engine target, List<String> chain, int i) throws Exception {
        String lease = select(donor, target, chain);
        ok(call(() -> cp.api.post(
                "/api/v1/leases/" + lease + "/destination",
                targetToken,
                Map.of(
                        "fencingEpoch",
                        target.epoch,
                        "ranks",
                        List.of(Map.of(
                                "rank",
                                0,
                                "regionRef",
                                "shm://soak-dst",
                                "slots",
                                List.of(List.of(i * BLOCKS, BLOCKS))))))));
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (!"RELEASED".equals(state(lease))) {
            assertThat(System.nanoTime())
                    .as("lease " + lease + " released within 30 s")
                    .isLessThan(deadline);
            commands(donor, null);
            orders();
            commands(target, lease);
        }
        leases++;
    }

    private String select(Engine donor, Engine target, List<String> chain) throws Exception {
        for (int attempt = 0; attempt < 300; attempt++) {
            JsonNode answer = ok(call(() -> cp.api.post(
                    "/api/v1/donor-selections",
                    router,
                    Map.of(
                            "requestId",
                            "soak-" + UUID.randomUUID(),
                            "targetIncarnationId",
                            target.id,
                            "seqHashes",
                            chain,
                            "localPrefixBlocks",
                            0,
                            "deadlineMs",
                            2000))));
            if ("HINT".equals(answer.get("decision").asString())) {
                return answer.get("leaseId").asString();
            }
            // the index follows the bank through NOTIFY: give it a moment, and keep both engines alive
            donor.heartbeat();
            target.heartbeat();
            Thread.sleep(20);
        }
        throw new AssertionError("no hint for a published chain within 300 attempts");
    }

    private List<String> store(String bank, long[] nextEvent) throws Exception {
        List<String> chain = new ArrayList<>();
        List<Map<String, Object>> blocks = new ArrayList<>();
        for (int i = 0; i < BLOCKS; i++) {
            chain.add(Long.toUnsignedString(ThreadLocalRandom.current().nextLong()));
            Map<String, Object> b = new LinkedHashMap<>(Map.of("seqHash", chain.get(i), "position", i, "slot", i));
            if (i > 0) {
                b.put("parentHash", chain.get(i - 1));
            }
            blocks.add(b);
        }
        long first = nextEvent[0]++;
        ok(call(() -> cp.api.post(
                "/api/v1/banks/" + bank + "/events",
                donorToken,
                Map.of(
                        "rank",
                        0,
                        "firstEventId",
                        first,
                        "events",
                        List.of(Map.of("type", "STORED", "blocks", blocks))))));
        return chain;
    }

    /** Acknowledges what an engine was told; the target commits what was delivered. */
    private void commands(Engine engine, String lease) throws Exception {
        JsonNode commands =
                ok(call(() -> cp.api.get("/api/v1/incarnations/" + engine.id + "/commands?waitMs=20", engine.token)));
        for (JsonNode c : commands) {
            if (c.get("type").asString().equals("DELIVERED")) {
                ok(call(() -> cp.api.post(
                        "/api/v1/leases/" + c.get("leaseId").asString() + "/commit",
                        engine.token,
                        Map.of(
                                "fencingEpoch",
                                engine.epoch,
                                "committedBlocks",
                                c.get("fetchBlocks").asInt()))));
            }
            ok(call(() -> cp.api.post(
                    "/api/v1/incarnations/" + engine.id + "/commands/"
                            + c.get("commandId").asString() + "/ack",
                    engine.token,
                    Map.of("ok", true, "fencingEpoch", engine.epoch))));
        }
    }

    /** The host's agent: every part moved in full. */
    private void orders() throws Exception {
        JsonNode orders = ok(call(() -> cp.api.get("/api/v1/agents/" + host + "/orders?waitMs=20", agent)));
        for (JsonNode o : orders) {
            for (JsonNode p : o.get("parts")) {
                ok(call(() -> cp.api.post(
                        "/api/v1/orders/" + o.get("orderId").asString() + "/parts/"
                                + p.get("rank").asInt(),
                        agent,
                        Map.of(
                                "state",
                                "DONE",
                                "bytes",
                                p.get("bytes").asLong(),
                                "durationUs",
                                400,
                                "fencingEpoch",
                                agentEpoch))));
            }
        }
    }

    private String state(String lease) throws Exception {
        return ok(call(() -> cp.api.get("/api/v1/leases/" + lease, cp.operator)))
                .get("state")
                .asString();
    }

    private final class Engine {
        final String token;
        final String id;
        long epoch;

        Engine(String token, String role, int ordinal) throws Exception {
            this.token = token;
            this.id = ok(call(() -> cp.api.post(
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
                                    "tcp://" + host + ":5557",
                                    "capabilities",
                                    List.of("kv.fetch_gpu@1.0"),
                                    "ranks",
                                    List.of(Map.of("rank", 0, "gpuOrdinal", ordinal, "gpuUuid", "GPU-" + ordinal))))))
                    .get("incarnationId")
                    .asString();
            heartbeat();
        }

        void heartbeat() throws Exception {
            epoch = ok(call(() -> cp.api.post("/api/v1/incarnations/" + id + "/heartbeat", token, Map.of())))
                    .get("fencingEpoch")
                    .asLong();
        }
    }

    private Answer call(PgControlPlane.Call c) throws Exception {
        Answer r = c.call();
        requests.incrementAndGet();
        if (r.status() >= 500) {
            serverErrors.incrementAndGet();
        }
        return r;
    }

    private static JsonNode ok(Answer r) {
        assertThat(r.status()).as(r.toString()).isBetween(200, 201);
        return r.json();
    }
}
