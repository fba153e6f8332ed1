package io.kvreuse.system;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.sim.SimDecodeEngine;
import io.kvreuse.sim.SimEngineException;
import io.kvreuse.sim.SimHttp;
import io.kvreuse.sim.SimPrefillEngine;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/**
 * A node agent killed with SIGKILL while a large transfer is in flight (the emulator holds it in
 * progress). The lease must go UNCERTAIN and keep its source pins and destination allocation for
 * as long as nobody can prove the transfer stopped; the restarted agent holds the host lock, so it
 * knows its predecessor (and every NIXL request it posted) is gone, reports those parts QUIESCED,
 * and the lease fails and releases — then the same agent moves the next lease normally.
 */
class AgentCrashSystemTests {

    static final int TP = 2;
    static final int BYTES_PER_BLOCK = 1024 * 1024;
    /** 32 MiB per rank, 64 MiB in all: a transfer that takes real time even unstalled. */
    static final int BLOCKS = 32;

    @TempDir
    Path home;

    @Test
    void agentKilledMidTransferLeavesTheLeaseUncertainWithItsHoldsAndTheRestartedAgentQuiescesIt() throws Exception {
        try (PgControlPlane cp = PgControlPlane.start(
                home, Map.of("KVREUSE_LEASES_SWEEPINTERVAL", "200ms", "KVREUSE_LEASES_CALIBRATIONINTERVAL", "1h"))) {
            // the control plane's transfer deadline (4 s) is what makes the lease UNCERTAIN
            cp.reuse(10_000, 4_000, 60_000);
            String domain = cp.domain(BYTES_PER_BLOCK);
            String hostId = "host-" + UUID.randomUUID();
            Path agentHome = Files.createDirectories(home.resolve(hostId));
            Map<String, String> agentEnv = agentEnv(cp, hostId);
            Map<String, String> stalled = new HashMap<>(agentEnv);
            stalled.put("KVREUSE_AGENT_EMULATOR_STALLTRANSFERS", "true");
            // the agent's own timeout is far away: only its death can end the transfer
            stalled.put("KVREUSE_AGENT_TRANSFERTIMEOUT", "10m");
            KvReuseProcess agent = KvReuseProcess.startAgent(agentHome, stalled);
            AtomicLong simBytes = new AtomicLong();
            try (SimDecodeEngine decode = new SimDecodeEngine(
                                    new SimHttp(cp.process.baseUrl(), cp.mint("ENGINE", "decode"), simBytes),
                                    domain,
                                    hostId,
                                    new int[] {0, 1},
                                    4 * BLOCKS,
                                    BYTES_PER_BLOCK)
                            .start();
                    SimPrefillEngine prefill = new SimPrefillEngine(
                                    new SimHttp(cp.process.baseUrl(), cp.mint("ENGINE", "prefill"), simBytes),
                                    domain,
                                    hostId,
                                    new int[] {2, 3},
                                    4 * BLOCKS,
                                    BYTES_PER_BLOCK)
                            .start()) {
                String router = cp.mint("ROUTER", "router");
                long firstEpoch = agentEpoch(cp, hostId);
                String lease = fetch(cp, router, decode, prefill, BLOCKS, 0);

                // in flight: every rank reported RUNNING, i.e. its NIXL request was posted
                awaitParts(cp, lease, "RUNNING", TP);
                agent.kill9();

                JsonNode uncertain = cp.awaitLease(lease, "UNCERTAIN");
                assertHolds(cp, uncertain, decode, lease);
                // no timer releases it: well past the deadline it still holds everything
                Thread.sleep(3_000);
                JsonNode later = cp.lease(lease);
                assertThat(later.get("state").asString()).isEqualTo("UNCERTAIN");
                assertHolds(cp, later, decode, lease);

                agent = KvReuseProcess.startAgent(agentHome, agentEnv);
                JsonNode released = cp.awaitLease(lease, "RELEASED");
                assertThat(released.get("outcome").asString()).isNotEqualTo("COMMITTED");
                assertThat(agentEpoch(cp, hostId)).isGreaterThan(firstEpoch);
                String restartedPid = "pid " + agent.pid();
                assertThat(partDetails(cp, lease))
                        .hasSize(TP)
                        .allSatisfy(p -> assertThat(p)
                                .startsWith("QUIESCED:")
                                .contains("host lock")
                                .contains(restartedPid));
                assertThat(decode.pinsOf(UUID.fromString(lease))).isZero();
                assertThat(prefill.verdict(UUID.fromString(lease))).isEmpty();
                assertThat(cp.scalar(
                                "SELECT count(*) FROM lease_source_pin WHERE lease_id = ?::uuid AND state <> 'RELEASED'",
                                lease))
                        .isZero();
                assertThat(cp.scalar(
                                "SELECT count(*) FROM lease_destination WHERE lease_id = ?::uuid AND state <> 'RELEASED'",
                                lease))
                        .isZero();

                // the restarted agent serves the host: the next lease moves, verifies and commits
                String second = fetch(cp, router, decode, prefill, BLOCKS / 4, 3 * BLOCKS);
                JsonNode done = cp.awaitLease(second, "RELEASED");
                assertThat(done.get("outcome").asString()).isEqualTo("COMMITTED");
                assertThat(prefill.verdict(UUID.fromString(second))
                                .orElseThrow()
                                .committed())
                        .isTrue();

                try (Connection c = cp.jdbc()) {
                    Invariants.assertHold(c);
                }
            } finally {
                agent.close();
            }
        }
    }

    private static void assertHolds(PgControlPlane cp, JsonNode lease, SimDecodeEngine decode, String id)
            throws Exception {
        assertThat(lease.get("pins"))
                .hasSize(TP)
                .allSatisfy(p -> assertThat(p.get("state").asString()).isEqualTo("HELD"));
        assertThat(lease.get("destinations"))
                .hasSize(TP)
                .allSatisfy(d -> assertThat(d.get("state").asString()).isEqualTo("HELD"));
        assertThat(decode.pinsOf(UUID.fromString(id))).isEqualTo(TP);
        assertThat(cp.scalar("SELECT count(*) FROM lease_source_pin WHERE lease_id = ?::uuid AND state = 'HELD'", id))
                .isEqualTo(TP);
        assertThat(cp.scalar("SELECT count(*) FROM lease_destination WHERE lease_id = ?::uuid AND state = 'HELD'", id))
                .isEqualTo(TP);
        // the donor's blocks carry the lease's pins in the bank itself
        assertThat(cp.scalar(
                        "SELECT count(*) FROM bank_block WHERE bank_id = ?::uuid AND pin_count > 0",
                        lease.get("bankId").asString()))
                .isEqualTo((long) TP * BLOCKS);
    }

    private static Map<String, String> agentEnv(PgControlPlane cp, String hostId) throws Exception {
        Map<String, String> env = new HashMap<>();
        env.put("KVREUSE_AGENT_CONTROLPLANE", cp.process.baseUrl());
        env.put("KVREUSE_AGENT_TOKEN", cp.mint("AGENT", "agent-" + hostId, hostId));
        env.put("KVREUSE_AGENT_HOSTID", hostId);
        env.put("KVREUSE_AGENT_POLLWAIT", "2s");
        for (int g = 0; g < 2 * TP; g++) {
            env.put("KVREUSE_AGENT_GPUS_" + g + "_ORDINAL", Integer.toString(g));
            env.put("KVREUSE_AGENT_GPUS_" + g + "_UUID", "GPU-" + UUID.randomUUID());
        }
        return env;
    }

    private static long agentEpoch(PgControlPlane cp, String hostId) throws Exception {
        return cp.await(
                        "agent of " + hostId,
                        Duration.ofSeconds(60),
                        () -> cp.api.get("/api/v1/agents/" + hostId, cp.operator),
                        r -> r.status() == 200)
                .json()
                .get("agentEpoch")
                .asLong();
    }

    /**
     * A chain stored from {@code slot} (each attempt further on), a hint for it and the target's destination. On a loaded machine
     * the transfer deadline may pass before the destination arrives (the lease then releases unused
     * and refuses it): the next attempt uses a fresh chain.
     */
    private static String fetch(
            PgControlPlane cp, String router, SimDecodeEngine decode, SimPrefillEngine prefill, int blocks, int slot)
            throws Exception {
        SimEngineException last = null;
        for (int attempt = 0; attempt < 3; attempt++) {
            long[] chain = ThreadLocalRandom.current().longs(blocks).toArray();
            decode.store(chain, slot + attempt * blocks);
            try {
                return prefill.fetch(hint(cp, router, prefill, chain)).toString();
            } catch (SimEngineException refused) {
                last = refused;
            }
        }
        throw new AssertionError("no lease took a destination in 3 attempts", last);
    }

    private static JsonNode hint(PgControlPlane cp, String router, SimPrefillEngine prefill, long[] chain)
            throws Exception {
        List<String> hashes = new ArrayList<>();
        for (long h : chain) {
            hashes.add(Long.toUnsignedString(h));
        }
        return cp.await(
                        "a hint",
                        Duration.ofSeconds(60),
                        () -> cp.api.post(
                                "/api/v1/donor-selections",
                                router,
                                Map.of(
                                        "requestId",
                                        "req-" + UUID.randomUUID(),
                                        "targetIncarnationId",
                                        prefill.id(),
                                        "seqHashes",
                                        hashes,
                                        "localPrefixBlocks",
                                        0,
                                        "deadlineMs",
                                        5_000)),
                        r -> r.status() == 200
                                && r.json().get("decision").asString().equals("HINT"))
                .json()
                .get("hint");
    }

    private static void awaitParts(PgControlPlane cp, String lease, String state, int n) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        String sql = """
                SELECT count(*) FROM transfer_part p JOIN transfer_order o ON o.order_id = p.order_id
                WHERE o.lease_id = ?::uuid AND p.state = ?""";
        while (cp.scalar(sql, lease, state) < n) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("parts of " + lease + " not " + state + "; log:\n" + cp.process.tail());
            }
            Thread.sleep(50);
        }
    }

    private static List<String> partDetails(PgControlPlane cp, String lease) throws Exception {
        List<String> details = new ArrayList<>();
        try (Connection c = cp.jdbc();
                PreparedStatement s = c.prepareStatement("""
                        SELECT p.state, p.detail FROM transfer_part p JOIN transfer_order o ON o.order_id = p.order_id
                        WHERE o.lease_id = ?::uuid ORDER BY p.rank""")) {
            s.setString(1, lease);
            try (ResultSet r = s.executeQuery()) {
                while (r.next()) {
                    details.add(r.getString(1) + ": " + r.getString(2));
                }
            }
        }
        return details;
    }
}
