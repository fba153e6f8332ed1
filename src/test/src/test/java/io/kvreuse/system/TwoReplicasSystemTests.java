package io.kvreuse.system;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.testkit.Answer;
import io.kvreuse.testkit.KvReuseClient;
import io.kvreuse.testkit.SampleContracts;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/**
 * Two control-plane processes of the built jar on one PostgreSQL, serving one fleet concurrently:
 * orders are handed out once across both, every lease transition happens once even when the
 * same report reaches both replicas at the same moment, and the in-flight cap of a donor holds
 * across both replicas' concurrent single and batch selections.
 */
class TwoReplicasSystemTests {

    static final int LEASES = 24;

    @TempDir
    Path home;

    @Test
    void twoReplicasHandOutEachOrderOnceAndMakeEachTransitionOnce() throws Exception {
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
                KvReuseClient[] replicas = {new KvReuseClient(a.baseUrl()), new KvReuseClient(b.baseUrl())};
                Fleet fleet = Fleet.build(replicas[0], operator);
                List<String> leases = new ArrayList<>();
                try {
                    for (int i = 0; i < LEASES; i++) {
                        leases.add(fleet.propose(replicas[i % 2]));
                    }
                } catch (AssertionError e) {
                    throw new AssertionError(e.getMessage() + "\nA:\n" + a.tail() + "\nB:\n" + b.tail(), e);
                }
                ExecutorService pool = Executors.newFixedThreadPool(8);
                // the engines and the agent stay alive throughout, as in a fleet: on a loaded machine
                // the scenario outlasts lost-after, and a silent donor's leases would be reclaimed
                try (AutoCloseable beats = fleet.keepAlive(replicas)) {
                    for (int i = 0; i < LEASES; i++) {
                        ok(replicas[i % 2].post(
                                "/api/v1/leases/" + leases.get(i) + "/destination",
                                fleet.target,
                                fleet.destination(i)));
                    }
                    // each PIN acknowledged on both replicas at once
                    for (JsonNode c : fleet.drain(replicas[0], fleet.donor, fleet.donorId, "PIN", LEASES)) {
                        both(
                                pool,
                                replicas,
                                "/api/v1/incarnations/" + fleet.donorId + "/commands/"
                                        + c.get("commandId").asString() + "/ack",
                                fleet.donor,
                                Map.of("ok", true, "fencingEpoch", fleet.donorEpoch));
                    }
                    Set<String> orders = ConcurrentHashMap.newKeySet();
                    List<String> handedOut = java.util.Collections.synchronizedList(new ArrayList<>());
                    List<Future<?>> pollers = new ArrayList<>();
                    for (int p = 0; p < 4; p++) {
                        KvReuseClient api = replicas[p % 2];
                        pollers.add(pool.submit(() -> {
                            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                            while (orders.size() < LEASES && System.nanoTime() < deadline) {
                                for (JsonNode o : api.get(
                                                "/api/v1/agents/" + fleet.host + "/orders?waitMs=500", fleet.agent)
                                        .json()) {
                                    handedOut.add(o.get("orderId").asString());
                                    orders.add(o.get("orderId").asString());
                                }
                            }
                            return null;
                        }));
                    }
                    for (Future<?> f : pollers) {
                        f.get(90, TimeUnit.SECONDS);
                    }
                    assertThat(orders).hasSize(LEASES);
                    assertThat(handedOut).as("no order handed out twice").hasSize(LEASES);
                    int i = 0;
                    for (String orderId : orders) {
                        ok(replicas[i++ % 2].post(
                                "/api/v1/orders/" + orderId + "/parts/0",
                                fleet.agent,
                                Map.of(
                                        "state",
                                        "DONE",
                                        "bytes",
                                        8L * 1048576,
                                        "durationUs",
                                        700,
                                        "fencingEpoch",
                                        fleet.agentEpoch)));
                    }
                    for (JsonNode c : fleet.drain(replicas[1], fleet.target, fleet.targetId, "DELIVERED", LEASES)) {
                        both(
                                pool,
                                replicas,
                                "/api/v1/leases/" + c.get("leaseId").asString() + "/commit",
                                fleet.target,
                                Map.of("fencingEpoch", fleet.targetEpoch, "committedBlocks", 8));
                    }
                    for (JsonNode c : fleet.drain(replicas[0], fleet.donor, fleet.donorId, "UNPIN", LEASES)) {
                        both(
                                pool,
                                replicas,
                                "/api/v1/incarnations/" + fleet.donorId + "/commands/"
                                        + c.get("commandId").asString() + "/ack",
                                fleet.donor,
                                Map.of("ok", true, "fencingEpoch", fleet.donorEpoch));
                    }
                } finally {
                    pool.shutdownNow();
                }
                try (Connection db = pg.getPostgresDatabase().getConnection()) {
                    assertThat(scalar(
                                    db,
                                    "SELECT count(*) FROM lease WHERE state = 'RELEASED' AND outcome = 'COMMITTED'"))
                            .as("leases released after a commit; all leases: %s", leaseStates(db))
                            .isEqualTo(LEASES);
                    assertThat(scalar(db, """
                            SELECT count(*) FROM (SELECT subject_id, from_state, to_state FROM audit_event
                            WHERE subject_type = 'lease' AND action = 'TRANSITION'
                            GROUP BY subject_id, from_state, to_state HAVING count(*) > 1) AS twice""")).as("transitions made twice").isZero();
                    assertThat(
                                    scalar(
                                            db,
                                            "SELECT count(*) FROM audit_event WHERE subject_type = 'lease' AND to_state = 'RELEASED'"))
                            .isEqualTo(LEASES);
                    assertThat(scalar(db, "SELECT COALESCE(sum(pin_count), 0) FROM bank_block"))
                            .isZero();
                    assertThat(scalar(db, "SELECT count(*) FROM transfer_order WHERE claims > 1"))
                            .isZero();
                }
            }
        }
    }

    @Test
    void theDonorCapHoldsAcrossReplicasUnderParallelSingleAndBatchSelections() throws Exception {
        int cap = 3;
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
                KvReuseClient[] replicas = {new KvReuseClient(a.baseUrl()), new KvReuseClient(b.baseUrl())};
                Fleet fleet = Fleet.build(replicas[0], operator, cap);
                // a hint from each replica proves it runs on these settings and indexed the bank; the
                // two warm-up leases are aborted at once and hold nothing
                for (KvReuseClient api : replicas) {
                    String warm = fleet.propose(api);
                    ok(api.post(
                            "/api/v1/leases/" + warm + "/abort",
                            fleet.target,
                            Map.of("fencingEpoch", fleet.targetEpoch, "reason", "warm-up")));
                }
                List<Callable<List<String>>> calls = new ArrayList<>();
                for (int i = 0; i < 4; i++) {
                    KvReuseClient api = replicas[i % 2];
                    calls.add(() -> {
                        List<Map<String, Object>> selections = new ArrayList<>();
                        for (int k = 0; k < 50; k++) {
                            selections.add(fleet.selection());
                        }
                        Answer r = api.post(
                                "/api/v1/donor-selections/batch", fleet.router, Map.of("selections", selections));
                        ok(r);
                        List<String> decisions = new ArrayList<>();
                        r.json().get("results").forEach(d -> decisions.add(decision(d)));
                        return decisions;
                    });
                }
                for (int i = 0; i < 40; i++) {
                    KvReuseClient api = replicas[i % 2];
                    calls.add(() -> {
                        Answer r = api.post("/api/v1/donor-selections", fleet.router, fleet.selection());
                        ok(r);
                        return List.of(decision(r.json()));
                    });
                }
                ExecutorService pool = Executors.newFixedThreadPool(24);
                List<String> decisions = new ArrayList<>();
                try {
                    for (Future<List<String>> f : pool.invokeAll(calls, 120, TimeUnit.SECONDS)) {
                        decisions.addAll(f.get());
                    }
                } finally {
                    pool.shutdownNow();
                }
                assertThat(decisions).hasSize(240);
                assertThat(decisions.stream().filter(d -> d.startsWith("HINT")))
                        .as("hints granted across both replicas")
                        .hasSize(cap);
                assertThat(decisions.stream().filter(d -> !d.startsWith("HINT")))
                        .as("every other answer")
                        .containsOnly("NO_HINT AT_CAPACITY");
                try (Connection db = pg.getPostgresDatabase().getConnection()) {
                    assertThat(scalar(
                                    db,
                                    "SELECT count(*) FROM lease WHERE donor_incarnation_id = '" + fleet.donorId
                                            + "' AND state = 'PROPOSED'"))
                            .as("leases written")
                            .isEqualTo(cap);
                    Invariants.assertHold(db);
                }
            }
        }
    }

    private static String decision(JsonNode answer) {
        String decision = answer.get("decision").asString();
        if (decision.equals("HINT")) {
            assertThat(answer.has("leaseId")).as(answer.toString()).isTrue();
            return "HINT " + answer.get("leaseId").asString();
        }
        assertThat(answer.has("leaseId") || answer.has("hint"))
                .as(answer.toString())
                .isFalse();
        return decision + " " + answer.get("reason").asString();
    }

    /** Each lease's state and outcome with its transitions, for a failure's message. */
    private static String leaseStates(Connection db) throws Exception {
        StringBuilder out = new StringBuilder();
        try (ResultSet rs = db.createStatement().executeQuery("""
                SELECT l.lease_id, l.state, l.outcome, (SELECT string_agg(a.from_state || '>' || a.to_state, ' '
                    ORDER BY a.event_id) FROM audit_event a WHERE a.subject_id = l.lease_id::text) AS moves
                FROM lease l ORDER BY l.created_at""")) {
            while (rs.next()) {
                out.append('\n')
                        .append(rs.getString(1))
                        .append(' ')
                        .append(rs.getString(2))
                        .append(' ')
                        .append(rs.getString(3))
                        .append(": ")
                        .append(rs.getString(4));
            }
        }
        return out.toString();
    }

    private static void both(ExecutorService pool, KvReuseClient[] replicas, String path, String token, Object body)
            throws Exception {
        List<Callable<Answer>> calls =
                List.of(() -> replicas[0].post(path, token, body), () -> replicas[1].post(path, token, body));
        for (Future<Answer> f : pool.invokeAll(calls)) {
            Answer r = f.get();
            assertThat(r.status()).as(path + " " + r).isIn(200, 409);
        }
    }

    private static void ok(Answer r) {
        assertThat(r.status()).as(r.toString()).isEqualTo(200);
    }

    private static long scalar(Connection db, String sql) throws Exception {
        try (ResultSet rs = db.createStatement().executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    /** One decode donor, one prefill target and the agent of their host, built through the API. */
    static final class Fleet {
        final String host = "host-" + UUID.randomUUID();
        String donor;
        String target;
        String agent;
        String router;
        String donorId;
        String targetId;
        long donorEpoch;
        long targetEpoch;
        long agentEpoch;
        List<String> chain;

        static Fleet build(KvReuseClient api, String operator) throws Exception {
            return build(api, operator, LEASES * 4);
        }

        /** The fleet, with at most {@code donorCap} leases in flight on the donor. */
        static Fleet build(KvReuseClient api, String operator, int donorCap) throws Exception {
            Fleet f = new Fleet();
            f.donor = token(api, operator, "ENGINE");
            f.target = token(api, operator, "ENGINE");
            f.agent = token(api, operator, "AGENT", f.host);
            f.router = token(api, operator, "ROUTER");
            Map<String, Object> contract = new LinkedHashMap<>(SampleContracts.llamaTp2());
            contract.put("tpSize", 1);
            contract.put("modelId", "system-" + UUID.randomUUID());
            String domain = created(api.post("/api/v1/domains", operator, contract))
                    .get("domainId")
                    .asString();
            f.donorId = f.engine(api, f.donor, "DECODE", domain, 0);
            f.targetId = f.engine(api, f.target, "PREFILL", domain, 1);
            f.donorEpoch = heartbeat(api, f.donor, f.donorId);
            f.targetEpoch = heartbeat(api, f.target, f.targetId);
            // destinations may name only regions the target registered
            created(api.post(
                    "/api/v1/incarnations/" + f.targetId + "/destination-regions",
                    f.target,
                    Map.of(
                            "fencingEpoch",
                            f.targetEpoch,
                            "regions",
                            List.of(Map.of("rank", 0, "regionRef", "shm://dst", "capacityBlocks", 1_000_000)))));
            String bank = created(api.post(
                            "/api/v1/incarnations/" + f.donorId + "/banks",
                            f.donor,
                            Map.of(
                                    "capacityBlocks",
                                    64,
                                    "parts",
                                    List.of(Map.of("rank", 0, "regionRef", "shm://bank", "bytesPerBlock", 1048576)))))
                    .get("bankId")
                    .asString();
            ok(api.post("/api/v1/banks/" + bank + "/parts/0/ready", f.donor, Map.of()));
            f.chain = new ArrayList<>();
            List<Map<String, Object>> blocks = new ArrayList<>();
            java.util.Random r = new java.util.Random();
            for (int i = 0; i < 8; i++) {
                f.chain.add(Long.toUnsignedString(r.nextLong()));
                Map<String, Object> block =
                        new LinkedHashMap<>(Map.of("seqHash", f.chain.get(i), "position", i, "slot", i));
                if (i > 0) {
                    block.put("parentHash", f.chain.get(i - 1));
                }
                blocks.add(block);
            }
            ok(api.post(
                    "/api/v1/banks/" + bank + "/events",
                    f.donor,
                    Map.of(
                            "rank",
                            0,
                            "firstEventId",
                            1,
                            "events",
                            List.of(Map.of("type", "STORED", "blocks", blocks)))));
            JsonNode settings = api.get("/api/v1/settings/reuse", operator).json();
            Map<String, Object> s = KvReuseClient.JSON.convertValue(settings, Map.class);
            s.remove("version");
            s.putAll(Map.of(
                    "enabled",
                    true,
                    "minFetchBlocks",
                    1,
                    "minGainMs",
                    0,
                    "minGainRatio",
                    0,
                    "leaseTtlMs",
                    60_000,
                    "transferDeadlineMs",
                    120_000,
                    "abandonDeadlineMs",
                    300_000,
                    "maxInflightPerDonor",
                    donorCap,
                    "maxInflightPerTarget",
                    100_000));
            ok(api.put("/api/v1/settings/reuse", operator, s));
            f.agentEpoch = created(api.post(
                            "/api/v1/agents",
                            f.agent,
                            Map.of(
                                    "hostId",
                                    f.host,
                                    "gpus",
                                    List.of(
                                            Map.of("ordinal", 0, "uuid", "GPU-a"),
                                            Map.of("ordinal", 1, "uuid", "GPU-b")),
                                    "nixlAgents",
                                    List.of(Map.of(
                                            "gpuOrdinal",
                                            0,
                                            "name",
                                            "a0",
                                            "metadata",
                                            Base64.getEncoder().encodeToString(new byte[] {1, 2, 3}))))))
                    .get("agentEpoch")
                    .asLong();
            return f;
        }

        private String engine(KvReuseClient api, String token, String role, String domain, int ordinal)
                throws Exception {
            return created(api.post(
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
                                    List.of(Map.of(
                                            "rank", 0, "gpuOrdinal", ordinal, "gpuUuid", "GPU-" + UUID.randomUUID())))))
                    .get("incarnationId")
                    .asString();
        }

        /**
         * Heartbeats the donor, the target and the agent every 300 ms, alternating replicas, until
         * closed; closing fails if an engine's fencing epoch moved (it was taken for silent meanwhile).
         */
        AutoCloseable keepAlive(KvReuseClient[] replicas) {
            java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
            List<String> moved = java.util.Collections.synchronizedList(new ArrayList<>());
            Thread beats = Thread.ofPlatform().daemon().name("fleet-heartbeats").start(() -> {
                for (int n = 0; !stop.get(); n++) {
                    KvReuseClient api = replicas[n % replicas.length];
                    try {
                        beat(api, donor, donorId, donorEpoch, moved);
                        beat(api, target, targetId, targetEpoch, moved);
                        api.post("/api/v1/agents/" + host + "/heartbeat", agent, Map.of());
                        Thread.sleep(300);
                    } catch (InterruptedException e) {
                        return;
                    } catch (Exception e) {
                        // a busy replica: beat again
                    }
                }
            });
            return () -> {
                stop.set(true);
                beats.interrupt();
                beats.join(10_000);
                assertThat(moved)
                        .as("fencing epochs moved while the fleet heartbeated")
                        .isEmpty();
            };
        }

        private static void beat(KvReuseClient api, String token, String id, long epoch, List<String> moved)
                throws Exception {
            Answer r = api.post("/api/v1/incarnations/" + id + "/heartbeat", token, Map.of());
            if (r.status() == 200 && r.json().get("fencingEpoch").asLong() != epoch) {
                moved.add(
                        id + " " + epoch + " -> " + r.json().get("fencingEpoch").asLong());
            }
        }

        /** One selection of the whole chain for the target, with a generous deadline. */
        Map<String, Object> selection() {
            return Map.of(
                    "requestId",
                    UUID.randomUUID().toString(),
                    "targetIncarnationId",
                    targetId,
                    "seqHashes",
                    chain,
                    "localPrefixBlocks",
                    0,
                    "deadlineMs",
                    10_000);
        }

        /** A selection on the given replica; waits until that replica's index has seen the bank. */
        String propose(KvReuseClient api) throws Exception {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            JsonNode last = null;
            while (System.nanoTime() < deadline) {
                last = api.post(
                                "/api/v1/donor-selections",
                                router,
                                Map.of(
                                        "requestId",
                                        UUID.randomUUID().toString(),
                                        "targetIncarnationId",
                                        targetId,
                                        "seqHashes",
                                        chain,
                                        "localPrefixBlocks",
                                        0,
                                        "deadlineMs",
                                        2000))
                        .json();
                if ("HINT".equals(last.get("decision").asString())) {
                    return last.get("leaseId").asString();
                }
                // engines heartbeat all the time; each heartbeat also refreshes the replicas' fleet view
                heartbeat(api, donor, donorId);
                heartbeat(api, target, targetId);
                Thread.sleep(100);
            }
            throw new AssertionError(
                    "no hint: " + last + "; target: " + api.get("/api/v1/incarnations/" + targetId, target)
                            + "; settings: " + api.get("/api/v1/settings/reuse", target));
        }

        Map<String, Object> destination(int i) {
            return Map.of(
                    "fencingEpoch",
                    targetEpoch,
                    "ranks",
                    List.of(Map.of("rank", 0, "regionRef", "shm://dst", "slots", List.of(List.of(i * 8, 8)))));
        }

        /** Polls until {@code n} commands of a type arrived (they are hidden after delivery, so each comes once). */
        List<JsonNode> drain(KvReuseClient api, String token, String incarnation, String type, int n) throws Exception {
            List<JsonNode> found = new ArrayList<>();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (found.size() < n && System.nanoTime() < deadline) {
                for (JsonNode c : api.get("/api/v1/incarnations/" + incarnation + "/commands?waitMs=1000", token)
                        .json()) {
                    if (type.equals(c.get("type").asString())) {
                        found.add(c);
                    }
                }
            }
            assertThat(found).as(type + " commands").hasSize(n);
            return found;
        }

        private static String token(KvReuseClient api, String operator, String role) throws Exception {
            return SystemFleet.mint(api, operator, role, role.toLowerCase());
        }

        private static String token(KvReuseClient api, String operator, String role, String hostId) throws Exception {
            return SystemFleet.mint(api, operator, role, role.toLowerCase(), hostId);
        }

        private static long heartbeat(KvReuseClient api, String token, String id) throws Exception {
            Answer r = api.post("/api/v1/incarnations/" + id + "/heartbeat", token, Map.of());
            ok(r);
            return r.json().get("fencingEpoch").asLong();
        }

        private static JsonNode created(Answer r) {
            assertThat(r.status()).as(r.toString()).isIn(200, 201);
            return r.json();
        }
    }
}
