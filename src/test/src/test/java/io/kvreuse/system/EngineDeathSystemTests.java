package io.kvreuse.system;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.sim.SimHttp;
import io.kvreuse.sim.SimPrefillEngine;
import io.kvreuse.testkit.Answer;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/**
 * A decode engine process killed with SIGKILL while a lease pins its blocks. Nothing reclaims it
 * automatically: it goes SUSPECT, then LOST (and RECLAIM_PENDING, since it is party to a lease
 * that holds memory), keeps its stable name so a new registration under that name is refused, and
 * only an operator's cleanup — planned, then executed once through the API — releases the pins,
 * drops the bank and frees the name for the next engine.
 */
class EngineDeathSystemTests {

    static final int BLOCKS = 8;
    static final String PROBLEMS = "https://kvreuse.io/problems/";

    @TempDir
    Path home;

    @Test
    void killedDecodeEngineGoesSuspectThenLostKeepsItsNameAndOnlyOperatorCleanupFreesIt() throws Exception {
        try (PgControlPlane cp = PgControlPlane.start(
                home,
                Map.of(
                        "KVREUSE_LIVENESS_SUSPECTAFTER", "2s",
                        "KVREUSE_LIVENESS_LOSTAFTER", "5s",
                        "KVREUSE_LIVENESS_SWEEPINTERVAL", "200ms",
                        "KVREUSE_LEASES_SWEEPINTERVAL", "200ms"))) {
            // the pinned source is not released by a timer while the scenario runs
            cp.reuse(60_000, 300_000, 600_000);
            String domain = cp.domain(1 << 20);
            String host = "host-" + UUID.randomUUID();
            String stableName = "decode-" + UUID.randomUUID();
            String donorToken = cp.mint("ENGINE", "decode");
            List<String> chain = new ArrayList<>();
            ThreadLocalRandom.current().longs(BLOCKS).forEach(h -> chain.add(Long.toUnsignedString(h)));

            DecodeEngineProcess donor = DecodeEngineProcess.start(
                    cp.process.baseUrl(), donorToken, domain, host, stableName, chain, home.resolve("engine.log"));
            try (SimPrefillEngine target = new SimPrefillEngine(
                            new SimHttp(cp.process.baseUrl(), cp.mint("ENGINE", "prefill"), new AtomicLong()),
                            domain,
                            host,
                            new int[] {2, 3},
                            64,
                            1 << 20)
                    .start()) {
                String lease = select(cp, target.id(), chain);
                // the donor acknowledged its PINs: its blocks are pinned for the lease
                JsonNode pinned = cp.awaitLease(lease, "SOURCE_PINNED");
                assertThat(pinned.get("pins"))
                        .hasSize(2)
                        .allSatisfy(p -> assertThat(p.get("state").asString()).isEqualTo("HELD"));

                donor.kill9();
                cp.awaitIncarnation(donor.incarnationId, "SUSPECT", Duration.ofSeconds(30));
                // LOST, and at once RECLAIM_PENDING: it is party to a lease that holds memory (the audit trail
                // shows both moves in order)
                cp.awaitIncarnation(donor.incarnationId, "RECLAIM_PENDING", Duration.ofSeconds(30));
                assertThat(transitions(cp, donor.incarnationId))
                        .containsSubsequence("READY->SUSPECT", "SUSPECT->LOST", "LOST->RECLAIM_PENDING");

                // still holding: the dead engine's pins stay until an operator acts
                JsonNode held = cp.lease(lease);
                assertThat(held.get("state").asString()).isEqualTo("SOURCE_PINNED");
                assertThat(pinnedBlocks(cp, donor.bankId)).isEqualTo(2L * BLOCKS);

                // its stable name is not free
                Answer again = cp.api.post(
                        "/api/v1/incarnations",
                        cp.mint("ENGINE", "decode-again"),
                        registration(domain, host, stableName));
                assertThat(again.status()).as(again.toString()).isEqualTo(409);
                assertThat(again.contentType()).startsWith("application/problem+json");
                assertThat(again.json().get("type").asString()).isEqualTo(PROBLEMS + "stable-name-held");

                assertThat(cp.api.get("/api/v1/cleanup/candidates", cp.operator).json())
                        .anySatisfy(c ->
                                assertThat(c.get("incarnationId").asString()).isEqualTo(donor.incarnationId));
                Answer planned =
                        cp.api.post("/api/v1/cleanup/plans", cp.operator, Map.of("incarnationId", donor.incarnationId));
                assertThat(planned.status()).as(planned.toString()).isEqualTo(201);
                JsonNode plan = planned.json();
                // every unfinished lease of the dead engine (a selection that missed its deadline under
                // load may have proposed, and the donor pinned, one more than the router heard of)
                List<String> unfinished = unfinishedLeases(cp, donor.incarnationId);
                assertThat(unfinished).contains(lease);
                List<String> inPlan = new ArrayList<>();
                plan.get("leases").forEach(l -> inPlan.add(l.get("leaseId").asString()));
                assertThat(inPlan).containsExactlyInAnyOrderElementsOf(unfinished);
                assertThat(plan.get("pinnedBlocks").asLong()).isEqualTo(2L * BLOCKS * unfinished.size());
                assertThat(plan.get("banks"))
                        .singleElement()
                        .satisfies(b -> assertThat(b.get("bankId").asString()).isEqualTo(donor.bankId));
                // the cleanup changed nothing yet: a plan is a dry run
                assertThat(pinnedBlocks(cp, donor.bankId)).isEqualTo(2L * BLOCKS);

                String execute = "/api/v1/cleanup/plans/" + plan.get("planId").asString() + "/execute";
                Map<String, Object> body = Map.of(
                        "reason",
                        "engine process killed (system test)",
                        "quiescenceAttested",
                        plan.get("attestationRequired").asBoolean());
                Answer executed = cp.api.post(execute, cp.operator, body);
                assertThat(executed.status()).as(executed.toString()).isEqualTo(200);
                assertThat(executed.json().get("state").asString()).isEqualTo("RECLAIMED");
                assertThat(executed.json().get("leasesEnded").asInt()).isEqualTo(unfinished.size());
                assertThat(executed.json().get("banksDropped").asLong()).isEqualTo(1);
                Answer twice = cp.api.post(execute, cp.operator, body);
                assertThat(twice.status()).as(twice.toString()).isEqualTo(409);

                for (String ended : unfinished) {
                    cp.awaitLease(ended, "RELEASED");
                }
                assertThat(unfinishedLeases(cp, donor.incarnationId)).isEmpty();
                assertThat(cp.scalar(
                                "SELECT count(*) FROM lease_source_pin WHERE lease_id = ?::uuid AND state <> 'RELEASED'",
                                lease))
                        .isZero();
                assertThat(pinnedBlocks(cp, donor.bankId)).isZero();
                assertThat(cp.lease(lease).get("state").asString()).isEqualTo("RELEASED");

                // the name is free again: a new engine process registers under it and serves
                try (DecodeEngineProcess next = DecodeEngineProcess.start(
                        cp.process.baseUrl(),
                        cp.mint("ENGINE", "decode-next"),
                        domain,
                        host,
                        stableName,
                        chain,
                        home.resolve("engine-next.log"))) {
                    assertThat(next.incarnationId).isNotEqualTo(donor.incarnationId);
                    cp.awaitIncarnation(next.incarnationId, "READY", Duration.ofSeconds(10));
                }

                try (Connection c = cp.jdbc()) {
                    Invariants.assertHold(c);
                }
            } finally {
                donor.close();
            }
        }
    }

    private static String select(PgControlPlane cp, String target, List<String> chain) throws Exception {
        String router = cp.mint("ROUTER", "router");
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
                                        target,
                                        "seqHashes",
                                        chain,
                                        "localPrefixBlocks",
                                        0,
                                        "deadlineMs",
                                        5_000)),
                        r -> r.status() == 200
                                && r.json().get("decision").asString().equals("HINT"))
                .json()
                .get("leaseId")
                .asString();
    }

    private static List<String> unfinishedLeases(PgControlPlane cp, String incarnationId) throws Exception {
        List<String> ids = new ArrayList<>();
        try (Connection c = cp.jdbc();
                PreparedStatement s = c.prepareStatement("""
                        SELECT lease_id FROM lease WHERE ?::uuid IN (donor_incarnation_id, target_incarnation_id)
                          AND state NOT IN ('RELEASED', 'EXPIRED')""")) {
            s.setString(1, incarnationId);
            try (ResultSet r = s.executeQuery()) {
                while (r.next()) {
                    ids.add(r.getString(1));
                }
            }
        }
        return ids;
    }

    private static long pinnedBlocks(PgControlPlane cp, String bankId) throws Exception {
        return cp.scalar("SELECT count(*) FROM bank_block WHERE bank_id = ?::uuid AND pin_count > 0", bankId);
    }

    private static List<String> transitions(PgControlPlane cp, String incarnationId) throws Exception {
        List<String> moves = new ArrayList<>();
        try (Connection c = cp.jdbc();
                PreparedStatement s = c.prepareStatement("""
                        SELECT from_state, to_state FROM audit_event
                        WHERE subject_type = 'incarnation' AND subject_id = ? AND action = 'TRANSITION'
                        ORDER BY event_id""")) {
            s.setString(1, incarnationId);
            try (ResultSet r = s.executeQuery()) {
                while (r.next()) {
                    moves.add(r.getString(1) + "->" + r.getString(2));
                }
            }
        }
        return moves;
    }

    private static Map<String, Object> registration(String domain, String host, String stableName) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("stableName", stableName);
        body.put("role", "DECODE");
        body.put("domainId", domain);
        body.put("hostId", host);
        body.put("controlEndpoint", "tcp://" + host + ":5557");
        body.put("capabilities", List.of("kv.fetch_gpu@1.0"));
        body.put(
                "ranks",
                List.of(
                        Map.of("rank", 0, "gpuOrdinal", 4, "gpuUuid", "GPU-" + UUID.randomUUID()),
                        Map.of("rank", 1, "gpuOrdinal", 5, "gpuUuid", "GPU-" + UUID.randomUUID())));
        return body;
    }
}
