package io.kvreuse.system;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.sim.SimDecodeEngine;
import io.kvreuse.sim.SimHttp;
import io.kvreuse.sim.SimPrefillEngine;
import io.kvreuse.testkit.Answer;
import io.kvreuse.testkit.KvReuseClient;
import io.kvreuse.testkit.SampleContracts;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/**
 * The data plane end to end through the built jar: a control plane (embedded PostgreSQL), one node
 * agent process moving bytes with the FFM-bound NIXL emulator, and simulated TP=2 decode and
 * prefill engines on one host whose "GPU" memory is shared memory. KV bytes move only between
 * regions; the control plane sees metadata.
 */
class DataPlaneSystemTests {

    static final int TP = 2;
    static final int BYTES_PER_BLOCK = 256 * 1024;
    static final int BLOCKS = 16;

    @TempDir
    static Path home;

    static KvReuseProcess controlPlane;
    static KvReuseClient api;
    static String operator;

    @BeforeAll
    static void controlPlane() throws Exception {
        // calibration from emulated transfers (host memory, agent overhead) would soon make reuse look
        // unprofitable in these domains; it is tested on its own, so it stays out of the way here
        controlPlane = KvReuseProcess.startEmbedded(
                home, Map.of("KVREUSE_LEASES_SWEEPINTERVAL", "200ms", "KVREUSE_LEASES_CALIBRATION_INTERVAL", "1h"));
        api = new KvReuseClient(controlPlane.baseUrl());
        operator = Files.readString(home.resolve("bootstrap-token")).strip();
        settings(2_000);
    }

    /** A domain per test: transfer-time calibration from one test must not change another's decisions. */
    static String domain() throws Exception {
        Map<String, Object> contract = new LinkedHashMap<>(SampleContracts.llamaTp2());
        contract.put("modelId", "sim-model-" + UUID.randomUUID());
        contract.put("bytesPerBlockPerRank", BYTES_PER_BLOCK);
        var r = api.post("/api/v1/domains", operator, contract);
        assertThat(r.status()).as(r.toString()).isEqualTo(201);
        return r.json().get("domainId").asString();
    }

    @AfterAll
    static void stop() throws Exception {
        if (controlPlane != null) {
            controlPlane.close();
        }
    }

    /** One host: an agent process over GPUs 0-3, a decode engine on 0-1 and a prefill engine on 2-3. */
    record Host(String id, KvReuseProcess agent, SimDecodeEngine decode, SimPrefillEngine prefill, AtomicLong simBytes)
            implements AutoCloseable {
        @Override
        public void close() throws Exception {
            decode.close();
            prefill.close();
            agent.close();
        }
    }

    static Host host(Map<String, String> agentEnv) throws Exception {
        String hostId = "host-" + UUID.randomUUID();
        String domain = domain();
        Map<String, String> env = new HashMap<>(agentEnv);
        env.put("KVREUSE_AGENT_CONTROLPLANE", controlPlane.baseUrl());
        env.put("KVREUSE_AGENT_TOKEN", mint("AGENT", "agent-" + hostId, hostId));
        env.put("KVREUSE_AGENT_HOSTID", hostId);
        env.put("KVREUSE_AGENT_POLLWAIT", "2s");
        for (int g = 0; g < 2 * TP; g++) {
            env.put("KVREUSE_AGENT_GPUS_" + g + "_ORDINAL", Integer.toString(g));
            env.put("KVREUSE_AGENT_GPUS_" + g + "_UUID", "GPU-" + UUID.randomUUID());
        }
        KvReuseProcess agent = KvReuseProcess.startAgent(Files.createDirectories(home.resolve(hostId)), env);
        await("agent registered", () -> api.get("/api/v1/agents/" + hostId, operator), r -> r.status() == 200);
        AtomicLong simBytes = new AtomicLong();
        SimDecodeEngine decode = new SimDecodeEngine(
                        new SimHttp(controlPlane.baseUrl(), mint("ENGINE", "decode"), simBytes),
                        domain,
                        hostId,
                        new int[] {0, 1},
                        64,
                        BYTES_PER_BLOCK)
                .start();
        SimPrefillEngine prefill = new SimPrefillEngine(
                        new SimHttp(controlPlane.baseUrl(), mint("ENGINE", "prefill"), simBytes),
                        domain,
                        hostId,
                        new int[] {2, 3},
                        64,
                        BYTES_PER_BLOCK)
                .start();
        return new Host(hostId, agent, decode, prefill, simBytes);
    }

    @Test
    void blocksMoveGpuToGpuThroughTheAgentAndAreVerifiedCommittedAndReleased() throws Exception {
        try (Host host = host(Map.of())) {
            long[] chain = ThreadLocalRandom.current().longs(BLOCKS).toArray();
            host.decode().store(chain, 3);

            UUID lease = host.prefill().fetch(hint(host, chain));

            JsonNode released = awaitLease(lease, l -> l.get("state").asString().equals("RELEASED"));
            assertThat(released.get("outcome").asString()).isEqualTo("COMMITTED");
            long moved = (long) TP * BLOCKS * BYTES_PER_BLOCK;
            SimPrefillEngine.Verdict verdict = host.prefill().verdict(lease).orElseThrow();
            assertThat(verdict.committed()).as(verdict.detail()).isTrue();
            assertThat(verdict.bytesVerified()).isEqualTo(moved);
            assertThat(host.decode().heldPins()).isZero();

            Map<String, Double> metrics = prometheus(host.agent());
            assertThat(metrics.get("kvreuse_agent_transfer_bytes_total")).isEqualTo((double) moved);
            assertThat(metrics.get("kvreuse_agent_emulator_copied_bytes_total")).isEqualTo((double) moved);
            double overHttp = metrics.get("kvreuse_agent_control_sent_bytes_total")
                    + host.simBytes().get();
            // every body sent to the control plane together is smaller than one block of one rank
            assertThat(overHttp).isLessThan(BYTES_PER_BLOCK).isLessThan(moved / 64.0);
        }
    }

    @Test
    void stalledTransferLeavesTheLeaseUncertainWithItsPinsUntilTheAgentReportsQuiesced() throws Exception {
        Map<String, String> faults =
                Map.of("KVREUSE_AGENT_EMULATOR_STALLTRANSFERS", "true", "KVREUSE_AGENT_TRANSFERTIMEOUT", "10s");
        try (Host host = host(faults)) {
            long[] chain = ThreadLocalRandom.current().longs(BLOCKS).toArray();
            host.decode().store(chain, 0);

            UUID lease = host.prefill().fetch(hint(host, chain));

            // the control plane's transfer deadline (2 s) passes long before the agent's own (10 s)
            awaitLease(lease, l -> l.get("state").asString().equals("UNCERTAIN"));
            Thread.sleep(3_000);
            JsonNode uncertain = lease(lease);
            assertThat(uncertain.get("state").asString()).isEqualTo("UNCERTAIN");
            assertThat(host.decode().pinsOf(lease)).isEqualTo(TP);

            JsonNode released = awaitLease(lease, l -> l.get("state").asString().equals("RELEASED"));
            assertThat(released.get("outcome").asString()).isNotEqualTo("COMMITTED");
            assertThat(host.decode().pinsOf(lease)).isZero();
            assertThat(host.prefill().verdict(lease)).isEmpty();
            Map<String, Double> metrics = prometheus(host.agent());
            assertThat(metrics.get("kvreuse_agent_parts_total{outcome=\"uncertain\"}"))
                    .isEqualTo((double) TP);
            assertThat(metrics.get("kvreuse_agent_emulator_copied_bytes_total")).isZero();
        }
    }

    @Test
    void agentResumesAfterAControlPlaneRestartAndMovesTheNextLease() throws Exception {
        try (Host host = host(Map.of())) {
            long[] first = ThreadLocalRandom.current().longs(4).toArray();
            host.decode().store(first, 0);
            UUID before = host.prefill().fetch(hint(host, first));
            awaitLease(before, l -> l.get("state").asString().equals("RELEASED"));

            controlPlane.stop();
            Thread.sleep(1_000); // the agent's polls and heartbeats now fail and back off
            controlPlane.start();

            // engines and agent reconnect with back-off: a lease proposed before the donor polls again may
            // expire unpinned (fail open, nothing held), and one whose part report waits in the agent's
            // back-off past the 2 s transfer deadline ends FAILED (a late success never revives it); once
            // everyone is back, a lease must go through
            UUID after = null;
            JsonNode ended = null;
            for (int attempt = 0; attempt < 4; attempt++) {
                long[] second = ThreadLocalRandom.current().longs(4).toArray();
                host.decode().store(second, 10 + attempt * 4);
                after = host.prefill().fetch(hint(host, second));
                ended = awaitLease(
                        after,
                        l -> List.of("RELEASED", "EXPIRED")
                                .contains(l.get("state").asString()));
                if ("COMMITTED".equals(ended.path("outcome").asString(""))) {
                    break;
                }
            }
            assertThat(ended.get("state").asString()).isEqualTo("RELEASED");
            assertThat(ended.get("outcome").asString()).isEqualTo("COMMITTED");
            assertThat(host.prefill().verdict(after).orElseThrow().committed()).isTrue();
        }
    }

    private static JsonNode hint(Host host, long[] chain) throws Exception {
        List<String> hashes = new ArrayList<>();
        for (long h : chain) {
            hashes.add(Long.toUnsignedString(h));
        }
        String router = mint("ROUTER", "router");
        JsonNode answer = await(
                        "a hint",
                        () -> api.post(
                                "/api/v1/donor-selections",
                                router,
                                Map.of(
                                        "requestId",
                                        "req-" + UUID.randomUUID(),
                                        "targetIncarnationId",
                                        host.prefill().id(),
                                        "seqHashes",
                                        hashes,
                                        "localPrefixBlocks",
                                        0)),
                        r -> r.status() == 200
                                && r.json().get("decision").asString().equals("HINT"))
                .json();
        return answer.get("hint");
    }

    private static JsonNode lease(UUID id) throws Exception {
        var r = api.get("/api/v1/leases/" + id, operator);
        assertThat(r.status()).as(r.toString()).isEqualTo(200);
        return r.json();
    }

    private static JsonNode awaitLease(UUID id, Predicate<JsonNode> done) throws Exception {
        return await(
                        "lease " + id,
                        () -> api.get("/api/v1/leases/" + id, operator),
                        r -> r.status() == 200 && done.test(r.json()))
                .json();
    }

    interface Call {
        Answer call() throws Exception;
    }

    private static Answer await(String what, Call call, Predicate<Answer> done) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        Answer last = null;
        while (System.nanoTime() < deadline) {
            last = call.call();
            if (done.test(last)) {
                return last;
            }
            Thread.sleep(100);
        }
        throw new AssertionError("no " + what + " within 60 s; last answer: " + last);
    }

    private static Map<String, Double> prometheus(KvReuseProcess agent) throws Exception {
        var r = new KvReuseClient(agent.baseUrl()).get("/actuator/prometheus");
        assertThat(r.status()).as(r.toString()).isEqualTo(200);
        Map<String, Double> values = new HashMap<>();
        for (String line : r.body().split("\n")) {
            if (line.startsWith("kvreuse_agent_")) {
                int space = line.lastIndexOf(' ');
                String name = line.substring(0, space)
                        .replace(",application=\"kvreuse\"", "")
                        .replace("{application=\"kvreuse\",", "{")
                        .replace("{application=\"kvreuse\"}", "");
                values.put(name, Double.parseDouble(line.substring(space + 1)));
            }
        }
        return values;
    }

    private static void settings(long transferDeadlineMs) throws Exception {
        Map<String, Object> doc = KvReuseClient.JSON.convertValue(
                api.get("/api/v1/settings/reuse", operator).json(), Map.class);
        doc.remove("version");
        doc.put("enabled", true);
        doc.put("minGainMs", 0.0);
        doc.put("minGainRatio", 0.0);
        doc.put("minFetchBlocks", 1);
        doc.put("maxFetchBlocks", 1024);
        doc.put("maxFetchBytes", 1L << 30);
        doc.put("leaseTtlMs", 10_000);
        doc.put("transferDeadlineMs", transferDeadlineMs);
        doc.put("abandonDeadlineMs", 60_000);
        var put = api.put("/api/v1/settings/reuse", operator, doc);
        assertThat(put.status()).as(put.toString()).isEqualTo(200);
    }

    private static String mint(String role, String subject) throws Exception {
        return SystemFleet.mint(api, operator, role, subject);
    }

    private static String mint(String role, String subject, String hostId) throws Exception {
        var r = api.post(
                "/api/v1/tokens",
                operator,
                Map.of("role", role, "subject", subject + "-" + UUID.randomUUID(), "hostId", hostId));
        assertThat(r.status()).as(r.toString()).isEqualTo(201);
        return r.json().get("token").asString();
    }
}
