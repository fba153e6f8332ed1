package io.kvreuse.lease;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.security.Role;
import io.kvreuse.support.IntegrationTest;
import io.kvreuse.support.LeaseWorld;
import io.kvreuse.support.TestTokens;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.MediaType;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.test.web.reactive.server.WebTestClient;

/** A destination names only memory its target registered; the agent's order says what that was. */
@IntegrationTest
class DestinationRegionIntegrationTests {

    private static final String PROBLEMS = "https://kvreuse.io/problems/";

    @Autowired
    WebTestClient http;

    @Autowired
    TestTokens tokens;

    @Autowired
    DatabaseClient db;

    LeaseWorld w;

    @BeforeEach
    void world() {
        w = new LeaseWorld(http, tokens, 2, 3_000, 6_000, 20_000);
    }

    @AfterEach
    void restore() {
        w.restore();
    }

    @Test
    void destinationInAnUnregisteredRegionOrAnotherEnginesBankThenRefusedAndNothingAllocated() {
        String lease = w.propose();
        for (String ref : List.of("shm://never-registered", "shm://bank-" + w.donor.id() + "-0")) {
            expectProblem(destination(lease, ref, 0, w.target.token()), 422, "destination-region-not-registered")
                    .jsonPath("$.detail")
                    .value(d -> assertThat((String) d).contains(ref).contains("not a destination region"));
        }
        // the target's own region of another rank is not this rank's
        expectProblem(
                destination(lease, List.of(w.destinationRegion(1), w.destinationRegion(0)), 0, w.target.token()),
                422,
                "destination-region-not-registered");
        // inside the region only: slots past its capacity are refused too
        expectProblem(
                        destination(
                                lease, w.destinationRegion(0), LeaseWorld.DESTINATION_CAPACITY - 4, w.target.token()),
                        422,
                        "destination-region-not-registered")
                .jsonPath("$.detail")
                .value(d -> assertThat((String) d).contains("outside region"));
        assertThat(count("SELECT count(*) FROM lease_destination WHERE lease_id = CAST(:l AS UUID)", lease))
                .isZero();
        assertThat(w.state(lease)).isEqualTo("PROPOSED");
        w.destination(lease, 0).expectStatus().isOk();
    }

    @Test
    void regionReferencesOutsideTheAgentsSchemesThenInvalidRequest() {
        String lease = w.propose();
        for (String ref : List.of(
                "shm://../../../etc/passwd",
                "shm://a/../b",
                "shm://x..y",
                "file:///etc/passwd",
                "http://169.254.169.254/",
                "shm://a\nb",
                "shm://a\u202eb",
                "cuda-ipc://0/short?size=1",
                "SHM://x",
                "shm://")) {
            expectProblem(destination(lease, ref, 0, w.target.token()), 400, "invalid-request")
                    .jsonPath("$.errors[0].field")
                    .value(f -> assertThat((String) f).endsWith("regionRef"));
            expectProblem(register(List.of(region(0, ref, 64))), 400, "invalid-request");
        }
        assertThat(count("SELECT count(*) FROM lease_destination WHERE lease_id = CAST(:l AS UUID)", lease))
                .isZero();
    }

    @Test
    void registrationListsRegionsAndRefusesWhatItMayNotHold() {
        String extra = "shm://extra-" + w.target.id();
        Map<String, Object> listed = json(register(List.of(region(0, extra, 64), region(1, extra, 64)))
                .expectStatus()
                .isOk());
        assertThat((List<?>) listed.get("regions")).hasSize(4);
        // the same again changes nothing; another capacity conflicts
        register(List.of(region(0, extra, 64))).expectStatus().isOk();
        expectProblem(register(List.of(region(0, extra, 65))), 409, "destination-region-differs");
        // another live engine's bank region on this host is not the target's to offer
        expectProblem(register(List.of(region(0, "shm://bank-" + w.donor.id() + "-0", 64))), 409, "region-held");
        expectProblem(register(List.of(region(2, "shm://r2-" + w.target.id(), 64))), 400, "invalid-destination-region");
        expectProblem(
                w.fleet.postRaw(
                        "/api/v1/incarnations/" + w.target.id() + "/destination-regions",
                        w.target.token(),
                        Map.of("fencingEpoch", w.epoch(w.target) + 1, "regions", List.of(region(0, extra, 64)))),
                409,
                "stale-epoch");
        // another engine's incarnation does not exist for this token
        expectProblem(
                w.fleet.postRaw(
                        "/api/v1/incarnations/" + w.target.id() + "/destination-regions",
                        tokens.mint(Role.ENGINE),
                        Map.of("fencingEpoch", w.epoch(w.target), "regions", List.of(region(0, "shm://mine", 64)))),
                404,
                "incarnation-not-found");
        assertThat(count(
                        "SELECT count(*) FROM destination_region WHERE incarnation_id = CAST(:l AS UUID)",
                        w.target.id()))
                .isEqualTo(4);
        Map<String, Object> read = json(http.get()
                .uri("/api/v1/incarnations/{id}/destination-regions", w.target.id())
                .header("Authorization", "Bearer " + tokens.operator())
                .exchange()
                .expectStatus()
                .isOk());
        assertThat(read.get("regions").toString())
                .contains(extra)
                .contains(w.destinationRegion(1))
                .doesNotContain("bank-")
                .doesNotContain("mine");
    }

    @Test
    void batchDestinationInAnUnregisteredRegionIsRefusedAloneAndTheOrderListsTheRegisteredRegions() {
        String good = w.propose();
        String bad = w.propose();
        List<Map<String, Object>> badRanks = new ArrayList<>();
        for (int r = 0; r < w.tp; r++) {
            badRanks.add(Map.of("rank", r, "regionRef", "shm://stranger-" + r, "slots", List.of(List.of(64, 8))));
        }
        List<Map<String, Object>> goodRanks = new ArrayList<>();
        for (int r = 0; r < w.tp; r++) {
            goodRanks.add(Map.of("rank", r, "regionRef", w.destinationRegion(r), "slots", List.of(List.of(0, 8))));
        }
        Map<String, Object> answer = json(w.fleet
                .postRaw(
                        "/api/v1/incarnations/" + w.target.id() + "/destinations",
                        w.target.token(),
                        Map.of(
                                "fencingEpoch",
                                w.epoch(w.target),
                                "destinations",
                                List.of(
                                        Map.of("leaseId", good, "ranks", goodRanks),
                                        Map.of("leaseId", bad, "ranks", badRanks))))
                .expectStatus()
                .isOk());
        List<?> results = (List<?>) answer.get("results");
        assertThat(results.get(0).toString()).contains("result").doesNotContain("problem");
        assertThat(results.get(1).toString()).contains("destination-region-not-registered");
        assertThat(count("SELECT count(*) FROM lease_destination WHERE lease_id = CAST(:l AS UUID)", bad))
                .isZero();

        w.pinAll(good);
        Map<String, Object> order = w.orders(w.agentToken, w.host, 2000).getFirst();
        Map<?, ?> part = (Map<?, ?>) ((List<?>) order.get("parts")).getFirst();
        assertThat(((Map<?, ?>) part.get("destination")).get("registeredRegions"))
                .isEqualTo(List.of(w.destinationRegion(0)));
        assertThat(((Map<?, ?>) part.get("source")).get("registeredRegions"))
                .isEqualTo(List.of(((Map<?, ?>) part.get("source")).get("regionRef")));
    }

    private WebTestClient.ResponseSpec destination(String lease, String ref, int start, String token) {
        List<String> refs = new ArrayList<>();
        for (int r = 0; r < w.tp; r++) {
            refs.add(r == 0 ? ref : w.destinationRegion(r));
        }
        return destination(lease, refs, start, token);
    }

    private WebTestClient.ResponseSpec destination(String lease, List<String> refs, int start, String token) {
        int fetch = ((Number) w.lease(lease).get("fetchBlocks")).intValue();
        List<Map<String, Object>> ranks = new ArrayList<>();
        for (int r = 0; r < refs.size(); r++) {
            ranks.add(Map.of("rank", r, "regionRef", refs.get(r), "slots", List.of(List.of(start, fetch))));
        }
        return w.fleet.postRaw(
                "/api/v1/leases/" + lease + "/destination",
                token,
                Map.of("fencingEpoch", w.epoch(w.target), "ranks", ranks));
    }

    private WebTestClient.ResponseSpec register(List<Map<String, Object>> regions) {
        return w.fleet.postRaw(
                "/api/v1/incarnations/" + w.target.id() + "/destination-regions",
                w.target.token(),
                Map.of("fencingEpoch", w.epoch(w.target), "regions", regions));
    }

    private static Map<String, Object> region(int rank, String ref, int capacity) {
        return Map.of("rank", rank, "regionRef", ref, "capacityBlocks", capacity);
    }

    private static WebTestClient.BodyContentSpec expectProblem(WebTestClient.ResponseSpec r, int status, String slug) {
        return r.expectStatus()
                .isEqualTo(status)
                .expectHeader()
                .contentType(MediaType.APPLICATION_PROBLEM_JSON)
                .expectBody()
                .jsonPath("$.type")
                .isEqualTo(PROBLEMS + slug);
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> json(WebTestClient.ResponseSpec r) {
        return r.expectBody(Map.class).returnResult().getResponseBody();
    }

    private long count(String sql, String id) {
        return db.sql(sql).bind("l", id).map(r -> r.get(0, Long.class)).one().block();
    }
}
