package io.kvreuse.lease;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.cleanup.CleanupPlans;
import io.kvreuse.cleanup.CleanupRecords;
import io.kvreuse.incarnation.LivenessSweeper;
import io.kvreuse.security.ApiPrincipal;
import io.kvreuse.security.Role;
import io.kvreuse.support.Fleet;
import io.kvreuse.support.IntegrationTest;
import io.kvreuse.support.LeaseWorld;
import io.kvreuse.support.MutableClock;
import io.kvreuse.support.TestTokens;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * An engine that owns both the donor and the target of a lease declares both sides quiesced while
 * the agent's part of the transfer is still RUNNING: the lease must not be released (the agent may
 * still be writing) but go UNCERTAIN, holding its pin and its destination, until the agent's own
 * final report (DESIGN §3).
 */
@IntegrationTest
class EngineQuiescenceIntegrationTests {

    @Autowired
    WebTestClient http;

    @Autowired
    TestTokens tokens;

    @Autowired
    MutableClock clock;

    @Autowired
    DatabaseClient db;

    @Autowired
    CleanupPlans cleanup;

    @Autowired
    LivenessSweeper liveness;

    LeaseWorld w;
    /** A prefill incarnation registered with the donor's own ENGINE token: one engine owns both sides. */
    Fleet.Engine sameOwnerTarget;

    @BeforeEach
    void world() {
        w = new LeaseWorld(http, tokens, 1, 30_000, 60_000, 120_000);
        Map<String, Object> body = w.fleet.post(
                "/api/v1/incarnations",
                w.donor.token(),
                Map.of(
                        "role",
                        "PREFILL",
                        "domainId",
                        w.domain,
                        "hostId",
                        w.host,
                        "controlEndpoint",
                        "tcp://" + w.host + ":5558",
                        "capabilities",
                        List.of("kv.fetch_gpu@1.0", "kv.fetch@1.0"),
                        "ranks",
                        List.of(Map.of("rank", 0, "gpuOrdinal", 2, "gpuUuid", "GPU-" + UUID.randomUUID()))),
                201);
        sameOwnerTarget = new Fleet.Engine((String) body.get("incarnationId"), w.donor.token(), w.host, w.domain);
        w.fleet.heartbeat(sameOwnerTarget);
        // a destination may name only memory its target registered beforehand
        w.fleet
                .postRaw(
                        "/api/v1/incarnations/" + sameOwnerTarget.id() + "/destination-regions",
                        sameOwnerTarget.token(),
                        Map.of(
                                "fencingEpoch",
                                w.epoch(sameOwnerTarget),
                                "regions",
                                List.of(Map.of(
                                        "rank",
                                        0,
                                        "regionRef",
                                        "shm://dst-" + sameOwnerTarget.id() + "-0",
                                        "capacityBlocks",
                                        LeaseWorld.DESTINATION_CAPACITY))))
                .expectStatus()
                .isOk();
    }

    @AfterEach
    void restore() {
        w.restore();
    }

    @Test
    void engineEvidenceOfBothSidesOverARunningAgentPartMakesTheLeaseUncertainNotReleased() {
        String lease = transferringWithRunningPart();

        quiesced(lease, "SOURCE", w.epoch(w.donor)).expectStatus().isOk();
        Map<String, Object> after = quiesced(lease, "DESTINATION", w.epoch(sameOwnerTarget))
                .expectStatus()
                .isOk()
                .expectBody(Map.class)
                .returnResult()
                .getResponseBody();
        assertThat(after.get("state")).isEqualTo("UNCERTAIN");
        assertThat(after.get("sourceQuiesced")).isEqualTo(true);
        assertThat(after.get("destinationQuiesced")).isEqualTo(true);
        assertThat(after.get("outcome")).as("nothing ended the lease").isNull();
        assertHeld(after);
        assertThat(w.state(lease)).isEqualTo("UNCERTAIN");
        assertThat(transitions(lease)).doesNotContain("FAILED", "RELEASING", "RELEASED");

        // the agent's own final report ends it, and only then is memory released
        Map<String, Object> order = order(lease);
        w.part(order.get("order_id"), 0, "QUIESCED", 0).expectStatus().isOk();
        assertThat(w.state(lease)).isIn("RELEASING", "RELEASED");
        assertThat(transitions(lease)).contains("UNCERTAIN", "FAILED", "RELEASING");
    }

    @Test
    void cleanupStillAsksForAttestationWhenOnlyEnginesDeclaredQuiescence() {
        String lease = transferringWithRunningPart();
        quiesced(lease, "SOURCE", w.epoch(w.donor)).expectStatus().isOk();
        quiesced(lease, "DESTINATION", w.epoch(sameOwnerTarget)).expectStatus().isOk();

        clock.advance(Duration.ofSeconds(11));
        w.fleet.heartbeat(w.target);
        for (int i = 0; i < 40 && !liveness.sweepOnce().block().ran(); i++) {
            LeaseWorld.sleep(50);
        }
        CleanupRecords.Plan plan =
                cleanup.plan(UUID.fromString(w.donor.id()), operator()).block();
        assertThat(plan.attestationRequired()).isTrue();
        assertThat(plan.leases())
                .filteredOn(l -> l.leaseId().toString().equals(lease))
                .singleElement()
                .satisfies(l -> assertThat(l.quiescenceProven()).isFalse());
        assertThat(plan.blockers()).anyMatch(b -> b.contains(lease));
    }

    private String transferringWithRunningPart() {
        String lease = propose();
        int fetch = ((Number) w.lease(lease).get("fetchBlocks")).intValue();
        w.fleet
                .postRaw(
                        "/api/v1/leases/" + lease + "/destination",
                        sameOwnerTarget.token(),
                        Map.of(
                                "fencingEpoch",
                                w.epoch(sameOwnerTarget),
                                "ranks",
                                List.of(Map.of(
                                        "rank",
                                        0,
                                        "regionRef",
                                        "shm://dst-" + sameOwnerTarget.id() + "-0",
                                        "slots",
                                        List.of(List.of(0, fetch))))))
                .expectStatus()
                .isOk();
        w.pinAll(lease);
        assertThat(w.orders(w.agentToken, w.host, 2000)).hasSize(1);
        w.part(order(lease).get("order_id"), 0, "RUNNING", 0).expectStatus().isOk();
        assertThat(w.state(lease)).isEqualTo("TRANSFERRING");
        return lease;
    }

    private String propose() {
        List<String> hashes = java.util.Arrays.stream(w.chain)
                .mapToObj(Long::toUnsignedString)
                .toList();
        String router = tokens.mint(Role.ROUTER);
        for (int i = 0; i < 200; i++) {
            Map<String, Object> answer = w.fleet.post(
                    "/api/v1/donor-selections",
                    router,
                    Map.of(
                            "requestId",
                            "req-" + UUID.randomUUID(),
                            "targetIncarnationId",
                            sameOwnerTarget.id(),
                            "seqHashes",
                            hashes,
                            "localPrefixBlocks",
                            0,
                            "deadlineMs",
                            2000),
                    200);
            if ("HINT".equals(answer.get("decision"))) {
                return (String) answer.get("leaseId");
            }
            LeaseWorld.sleep(50);
        }
        throw new AssertionError("no hint for the same-owner target");
    }

    private WebTestClient.ResponseSpec quiesced(String lease, String side, long epoch) {
        return w.fleet.postRaw(
                "/api/v1/leases/" + lease + "/quiesced",
                w.donor.token(),
                Map.of("side", side, "evidence", "engine released its handles", "fencingEpoch", epoch));
    }

    @SuppressWarnings("unchecked")
    private static void assertHeld(Map<String, Object> lease) {
        assertThat((List<Map<String, Object>>) lease.get("pins"))
                .isNotEmpty()
                .allSatisfy(p -> assertThat(p.get("state")).isEqualTo("HELD"));
        assertThat((List<Map<String, Object>>) lease.get("destinations"))
                .isNotEmpty()
                .allSatisfy(d -> assertThat(d.get("state")).isEqualTo("HELD"));
    }

    private Map<String, Object> order(String lease) {
        return db.sql("SELECT o.order_id::text AS order_id FROM transfer_order o WHERE o.lease_id = CAST(:l AS UUID)")
                .bind("l", lease)
                .fetch()
                .one()
                .block();
    }

    private List<String> transitions(String lease) {
        return db.sql("SELECT to_state FROM audit_event WHERE subject_type = 'lease' AND subject_id = :l"
                        + " AND action = 'TRANSITION' ORDER BY event_id")
                .bind("l", lease)
                .map((r, m) -> r.get("to_state", String.class))
                .all()
                .collectList()
                .block();
    }

    private static ApiPrincipal operator() {
        return new ApiPrincipal(UUID.randomUUID(), Role.OPERATOR, "ops-" + UUID.randomUUID());
    }
}
