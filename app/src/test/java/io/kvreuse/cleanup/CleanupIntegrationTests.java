package io.kvreuse.cleanup;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvreuse.error.KvReuseException;
import io.kvreuse.incarnation.IncarnationState;
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

@IntegrationTest
class CleanupIntegrationTests {

    static final ApiPrincipal OPERATOR = new ApiPrincipal(UUID.randomUUID(), Role.OPERATOR, "ops-" + UUID.randomUUID());

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

    @BeforeEach
    void world() {
        w = new LeaseWorld(http, tokens, 1, 30_000, 60_000, 120_000);
    }

    @AfterEach
    void restore() {
        w.restore();
    }

    @Test
    void executionNeedsAttestationForAnUnprovenTransferFencesAndReleasesOnce() {
        String lease = transferring();
        suspectDonor();
        CleanupRecords.Plan plan = cleanup.plan(id(w.donor), OPERATOR).block();
        assertThat(plan.attestationRequired()).isTrue();
        assertThat(plan.blockers()).singleElement().asString().contains(lease);
        assertThat(plan.pinnedBlocks()).isEqualTo(8);
        assertThat(plan.banks())
                .singleElement()
                .satisfies(b -> assertThat(b.pinnedBlocks()).isEqualTo(8));

        assertThatThrownBy(() -> cleanup.execute(plan.planId(), "donor pod evicted", false, OPERATOR)
                        .block())
                .isInstanceOfSatisfying(
                        KvReuseException.class, e -> assertThat(e.slug()).isEqualTo("quiescence-attestation-required"));
        long oldEpoch = w.epoch(w.donor);
        CleanupRecords.Outcome outcome = cleanup.execute(
                        plan.planId(), "donor pod evicted; node drained", true, OPERATOR)
                .block();
        assertThat(outcome.state()).isEqualTo("RECLAIMED");
        assertThat(outcome.pinsReleased()).isEqualTo(1);
        assertThat(outcome.banksDropped()).isEqualTo(1);
        assertThat(pinned()).isZero();
        assertThat(w.lease(lease).get("outcome")).isEqualTo("RECLAIMED");
        // the UNPIN the release asked of the donor is withdrawn in the same decision: its process is gone
        assertThat(openCommands(lease, "UNPIN"))
                .as("open UNPIN commands left for the reclaimed donor")
                .isZero();

        assertThatThrownBy(() ->
                        cleanup.execute(plan.planId(), "again", true, OPERATOR).block())
                .isInstanceOfSatisfying(
                        KvReuseException.class, e -> assertThat(e.slug()).isEqualTo("cleanup-plan-executed"));

        // fencing: the old incarnation's reports are refused; a late DONE changes nothing
        w.fleet
                .postRaw("/api/v1/incarnations/" + w.donor.id() + "/heartbeat", w.donor.token(), Map.of())
                .expectStatus()
                .value(s -> assertThat(s).isGreaterThanOrEqualTo(400));
        w.fleet
                .postRaw(
                        "/api/v1/leases/" + lease + "/quiesced",
                        w.donor.token(),
                        Map.of("side", "SOURCE", "evidence", "late", "fencingEpoch", oldEpoch))
                .expectStatus()
                .isEqualTo(409);
        Map<String, Object> order = order(lease);
        w.part(order.get("order_id"), 0, "DONE", ((Number) order.get("bytes")).longValue())
                .expectStatus()
                .isOk();
        assertThat(w.lease(lease).get("state")).isIn("RELEASING", "RELEASED");
        assertThat(pinned()).isZero();
        assertThat(audit(plan.planId())).contains("CLEANUP_PLANNED", "CLEANUP_EXECUTED");
    }

    @Test
    void aPlanIsRefusedWhenTheStateChangedSinceItWasMade() {
        suspectDonor();
        CleanupRecords.Plan plan = cleanup.plan(id(w.donor), OPERATOR).block();
        w.fleet.heartbeat(w.donor); // back to READY: a different epoch and state
        assertThatThrownBy(() ->
                        cleanup.execute(plan.planId(), "stale", false, OPERATOR).block())
                .isInstanceOfSatisfying(
                        KvReuseException.class, e -> assertThat(e.slug()).isEqualTo("cleanup-plan-stale"));
        assertThat(cleanup.find(plan.planId()).block().status()).isEqualTo("PLANNED");
    }

    @Test
    void theStableNameOfAReclaimedIncarnationCanBeRegisteredAgain() {
        String name = "decode-" + UUID.randomUUID();
        String token = tokens.mint(Role.ENGINE);
        Map<String, Object> request = Map.of(
                "stableName",
                name,
                "role",
                "DECODE",
                "domainId",
                w.domain,
                "hostId",
                Fleet.host(),
                "controlEndpoint",
                "tcp://x:1",
                "capabilities",
                List.of("kv.fetch_gpu@1.0"),
                "ranks",
                List.of(Map.of("rank", 0, "gpuOrdinal", 0, "gpuUuid", "GPU-" + UUID.randomUUID())));
        String first = (String)
                w.fleet.post("/api/v1/incarnations", token, request, 201).get("incarnationId");
        clock.advance(Duration.ofSeconds(11));
        w.fleet.heartbeat(w.donor);
        w.fleet.heartbeat(w.target);
        sweepLiveness();
        w.fleet.postRaw("/api/v1/incarnations", token, request).expectStatus().isEqualTo(409);
        CleanupRecords.Plan plan =
                cleanup.plan(UUID.fromString(first), OPERATOR).block();
        assertThat(plan.attestationRequired()).isFalse();
        cleanup.execute(plan.planId(), "pod restarted under the same name", false, OPERATOR)
                .block();
        w.fleet.post("/api/v1/incarnations", token, request, 201);
    }

    @Test
    void restApiPlansExecutesAndRejectsBadInput() {
        suspectDonor();
        List<?> candidates = http.get()
                .uri("/api/v1/cleanup/candidates")
                .header("Authorization", "Bearer " + tokens.operator())
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody(List.class)
                .returnResult()
                .getResponseBody();
        assertThat(candidates)
                .anySatisfy(
                        c -> assertThat(((Map<?, ?>) c).get("incarnationId")).isEqualTo(w.donor.id()));
        Map<String, Object> plan =
                w.fleet.post("/api/v1/cleanup/plans", tokens.operator(), Map.of("incarnationId", w.donor.id()), 201);
        String planId = (String) plan.get("planId");
        w.fleet
                .postRaw(
                        "/api/v1/cleanup/plans/" + planId + "/execute",
                        tokens.operator(),
                        Map.of("quiescenceAttested", false))
                .expectStatus()
                .isBadRequest()
                .expectBody()
                .jsonPath("$.type")
                .isEqualTo("https://kvreuse.io/problems/invalid-request");
        w.fleet
                .postRaw(
                        "/api/v1/cleanup/plans/" + planId + "/execute",
                        w.donor.token(),
                        Map.of("reason", "x", "quiescenceAttested", false))
                .expectStatus()
                .isForbidden();
        w.fleet
                .postRaw("/api/v1/cleanup/plans", tokens.operator(), Map.of("incarnationId", w.target.id()))
                .expectStatus()
                .isEqualTo(422)
                .expectBody()
                .jsonPath("$.type")
                .isEqualTo("https://kvreuse.io/problems/not-a-cleanup-candidate");
        Map<String, Object> outcome = w.fleet.post(
                "/api/v1/cleanup/plans/" + planId + "/execute",
                tokens.operator(),
                Map.of("reason", "host failed", "quiescenceAttested", false),
                200);
        assertThat(outcome.get("state")).isEqualTo("RECLAIMED");
        w.fleet
                .postRaw(
                        "/api/v1/cleanup/plans/" + planId + "/execute",
                        tokens.operator(),
                        Map.of("reason", "host failed", "quiescenceAttested", false))
                .expectStatus()
                .isEqualTo(409)
                .expectBody()
                .jsonPath("$.type")
                .isEqualTo("https://kvreuse.io/problems/cleanup-plan-executed");
        assertThat(w.fleet
                        .get("/api/v1/cleanup/plans/" + planId, tokens.operator())
                        .get("status"))
                .isEqualTo("EXECUTED");
    }

    @Test
    void aLiveEngineThatOwnsABankIsNeverPlannedFor() {
        w.fleet
                .postRaw("/api/v1/cleanup/plans", tokens.operator(), Map.of("incarnationId", w.donor.id()))
                .expectStatus()
                .isEqualTo(422)
                .expectHeader()
                .contentType("application/problem+json")
                .expectBody()
                .jsonPath("$.type")
                .isEqualTo("https://kvreuse.io/problems/not-a-cleanup-candidate")
                .jsonPath("$.currentState")
                .isEqualTo("READY")
                .jsonPath("$.planId")
                .doesNotExist();
        w.fleet.post("/api/v1/incarnations/" + w.donor.id() + "/drain", w.donor.token(), Map.of(), 200);
        assertThatThrownBy(() -> cleanup.plan(id(w.donor), OPERATOR).block())
                .isInstanceOfSatisfying(KvReuseException.class, e -> {
                    assertThat(e.slug()).isEqualTo("not-a-cleanup-candidate");
                    assertThat(e.properties()).containsEntry("currentState", IncarnationState.DRAINING);
                });
        assertThat(plans(w.donor)).as("no plan stored for a live engine").isEmpty();
        assertThat(bankState()).as("the live engine keeps its bank").isNotEqualTo("DROPPED");
        assertThat(w.fleet
                        .get("/api/v1/incarnations/" + w.donor.id(), tokens.operator())
                        .get("state"))
                .isEqualTo("DRAINING");
    }

    @Test
    void aNewPlanSupersedesTheOlderUnexecutedOnesAndOnlyTheNewestRuns() {
        suspectDonor();
        List<String> made = new java.util.ArrayList<>();
        for (int i = 0; i < 3; i++) {
            made.add((String) w.fleet
                    .post("/api/v1/cleanup/plans", tokens.operator(), Map.of("incarnationId", w.donor.id()), 201)
                    .get("planId"));
        }
        // operators retrying at once: plan making of one incarnation serializes
        List<CleanupRecords.Plan> racing = reactor.core.publisher.Flux.range(0, 8)
                .flatMap(i -> cleanup.plan(id(w.donor), OPERATOR))
                .collectList()
                .block(Duration.ofSeconds(30));
        assertThat(racing).hasSize(8);
        Map<String, String> states = plans(w.donor);
        assertThat(states).hasSize(11);
        assertThat(states.values().stream().filter("PLANNED"::equals)).hasSize(1);
        String newest = states.entrySet().stream()
                .filter(e -> e.getValue().equals("PLANNED"))
                .findFirst()
                .orElseThrow()
                .getKey();
        assertThat(made).doesNotContain(newest);

        w.fleet
                .postRaw(
                        "/api/v1/cleanup/plans/" + made.getFirst() + "/execute",
                        tokens.operator(),
                        Map.of("reason", "host failed", "quiescenceAttested", true))
                .expectStatus()
                .isEqualTo(409)
                .expectHeader()
                .contentType("application/problem+json")
                .expectBody()
                .jsonPath("$.type")
                .isEqualTo("https://kvreuse.io/problems/cleanup-plan-superseded")
                .jsonPath("$.planId")
                .isEqualTo(made.getFirst());
        assertThat(w.fleet
                        .get("/api/v1/incarnations/" + w.donor.id(), tokens.operator())
                        .get("state"))
                .as("a superseded plan changes nothing")
                .isEqualTo("SUSPECT");
        assertThat(w.fleet
                        .get("/api/v1/cleanup/plans/" + made.getFirst(), tokens.operator())
                        .get("status"))
                .isEqualTo("STALE");

        Map<String, Object> outcome = w.fleet.post(
                "/api/v1/cleanup/plans/" + newest + "/execute",
                tokens.operator(),
                Map.of("reason", "host failed", "quiescenceAttested", false),
                200);
        assertThat(outcome.get("state")).isEqualTo("RECLAIMED");
        assertThat(plans(w.donor).values()).containsOnly("STALE", "EXECUTED").containsOnlyOnce("EXECUTED");
    }

    private Map<String, String> plans(Fleet.Engine e) {
        Map<String, String> states = new java.util.LinkedHashMap<>();
        db.sql(
                        "SELECT plan_id::text AS plan_id, state FROM cleanup_plan WHERE incarnation_id = CAST(:i AS UUID) ORDER BY created_at")
                .bind("i", e.id())
                .map((r, m) -> Map.entry(r.get("plan_id", String.class), r.get("state", String.class)))
                .all()
                .doOnNext(en -> states.put(en.getKey(), en.getValue()))
                .blockLast();
        return states;
    }

    private String bankState() {
        return db.sql("SELECT state FROM retained_bank WHERE bank_id = CAST(:b AS UUID)")
                .bind("b", w.bankId)
                .map((r, m) -> r.get("state", String.class))
                .one()
                .block();
    }

    private String transferring() {
        String lease = w.propose();
        w.destination(lease, 0).expectStatus().isOk();
        w.pinAll(lease);
        assertThat(w.orders(w.agentToken, w.host, 2000)).hasSize(1);
        return lease;
    }

    private void suspectDonor() {
        clock.advance(Duration.ofSeconds(11));
        w.fleet.heartbeat(w.target);
        sweepLiveness();
        assertThat(w.fleet
                        .get("/api/v1/incarnations/" + w.donor.id(), tokens.operator())
                        .get("state"))
                .isEqualTo("SUSPECT");
    }

    private void sweepLiveness() {
        for (int i = 0; i < 40 && !liveness.sweepOnce().block().ran(); i++) {
            LeaseWorld.sleep(50);
        }
    }

    private static UUID id(Fleet.Engine e) {
        return UUID.fromString(e.id());
    }

    private long openCommands(String lease, String type) {
        return db.sql("SELECT count(*) AS n FROM engine_command WHERE lease_id = CAST(:l AS UUID) AND type = :t "
                        + "AND acked_at IS NULL")
                .bind("l", lease)
                .bind("t", type)
                .map((r, m) -> ((Number) r.get("n")).longValue())
                .one()
                .block();
    }

    private long pinned() {
        return db.sql("SELECT COALESCE(sum(pin_count), 0) AS n FROM bank_block WHERE bank_id = CAST(:b AS UUID)")
                .bind("b", w.bankId)
                .map((r, m) -> ((Number) r.get("n")).longValue())
                .one()
                .block();
    }

    private Map<String, Object> order(String lease) {
        return db.sql("SELECT o.order_id::text AS order_id, p.bytes FROM transfer_order o JOIN transfer_part p "
                        + "ON p.order_id = o.order_id WHERE o.lease_id = CAST(:l AS UUID) LIMIT 1")
                .bind("l", lease)
                .fetch()
                .one()
                .block();
    }

    private List<String> audit(UUID planId) {
        return db.sql("SELECT action FROM audit_event WHERE subject_id = :p ORDER BY event_id")
                .bind("p", planId.toString())
                .map((r, m) -> r.get("action", String.class))
                .all()
                .collectList()
                .block();
    }
}
