package io.kvreuse.selection;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.bank.InventoryFeed;
import io.kvreuse.security.Role;
import io.kvreuse.support.Fleet;
import io.kvreuse.support.Fleet.Engine;
import io.kvreuse.support.IntegrationTest;
import io.kvreuse.support.ReuseSettingsFixture;
import io.kvreuse.support.TestTokens;
import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.MediaType;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.test.web.reactive.server.WebTestClient;
import tools.jackson.databind.json.JsonMapper;

/**
 * {@code explain: true} lists each candidate considered and why it dropped out; without it the
 * answer carries no explanation at all.
 */
@IntegrationTest
class SelectionExplainIntegrationTests {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    @Autowired
    WebTestClient http;

    @Autowired
    TestTokens tokens;

    @Autowired
    InventoryFeed inventory;

    @Autowired
    FleetDirectory directory;

    @Autowired
    DatabaseClient db;

    Fleet fleet;
    ReuseSettingsFixture settings;
    SelectionTestSupport s;
    String domain;
    String host;

    @BeforeEach
    void setUp() {
        fleet = new Fleet(http, tokens);
        settings = new ReuseSettingsFixture(http, tokens.operator());
        settings.apply(ReuseSettingsFixture::permissive);
        s = new SelectionTestSupport(http, fleet, inventory, directory, db, tokens.mint(Role.ROUTER));
        domain = fleet.domain(2, "GPU_CUDA_IPC");
        host = Fleet.host();
    }

    @AfterEach
    void restore() {
        settings.restore();
    }

    @Test
    void withoutExplainTheAnswersCarryNoExplanation() {
        var donor = s.donor(domain, 2, host, Fleet.chain(16));
        Engine target = s.target(domain, 2, host);
        Map<String, Object> hint = parse(raw(body(target.id(), donor.chain(), 0, null)));
        assertThat(hint.keySet()).containsExactly("decision", "leaseId", "hint", "predicted");
        Map<String, Object> noHint = parse(raw(body(target.id(), Fleet.chain(16), 0, false)));
        assertThat(noHint.keySet()).containsExactly("decision", "reason");
        assertThat(noHint).doesNotContainKey("explanation");
    }

    @Test
    void explainedHintNamesTheChosenDonorAndTheOutrankedOne() {
        long[] chain = Fleet.chain(32);
        var longer = s.donor(domain, 2, host, chain);
        var shorter = s.donor(domain, 2, host, Arrays.copyOf(chain, 20));
        Engine target = s.target(domain, 2, host);
        Map<String, Object> answer = explain(target.id(), chain, 0);
        assertThat(answer).containsEntry("decision", "HINT").containsKey("leaseId");
        Map<String, Object> chosen = candidate(answer, longer.bankId());
        assertThat(chosen)
                .containsEntry("outcome", "CHOSEN")
                .containsEntry("donorIncarnationId", longer.engine().id())
                .containsEntry("coveredBlocks", 32)
                .doesNotContainKey("reason");
        assertThat((String) chosen.get("detail")).contains("fetch 32 blocks");
        assertThat(candidate(answer, shorter.bankId()))
                .containsEntry("outcome", "OUTRANKED")
                .containsEntry("coveredBlocks", 20);
        assertThat(detail(answer)).startsWith("hint: donor " + longer.engine().id());
    }

    @Test
    void explainedTargetWithoutTheCapabilityNamesIt() {
        var donor = s.donor(domain, 2, host, Fleet.chain(16));
        Engine target = fleet.register("PREFILL", domain, 2, host, List.of("kv.fetch@1.0"));
        fleet.heartbeat(target);
        s.awaitDirectory(target.id());
        Map<String, Object> answer = explain(target.id(), donor.chain(), 0);
        assertNoHint(answer, "NOT_CAPABLE");
        assertThat(detail(answer)).contains("the target does not advertise kv.fetch_gpu@1.0");
        assertThat(candidates(answer)).isEmpty();
    }

    @Test
    void explainedDonorWithoutTheCapabilityNamesTheMissingOne() {
        long[] chain = Fleet.chain(16);
        Engine decode = fleet.register("DECODE", domain, 2, host, List.of("kv.fetch@1.0"));
        fleet.heartbeat(decode);
        String bankId = fleet.bank(decode, 2, 64);
        fleet.storeChain(decode, bankId, 2, chain, 0, new long[] {1, 1});
        s.awaitIndexed(bankId);
        s.awaitDirectory(decode.id());
        Engine target = s.target(domain, 2, host);
        Map<String, Object> answer = explain(target.id(), chain, 0);
        assertNoHint(answer, "NOT_CAPABLE");
        assertThat(candidate(answer, bankId))
                .containsEntry("outcome", "DROPPED")
                .containsEntry("reason", "NOT_CAPABLE")
                .containsEntry("donorIncarnationId", decode.id());
        assertThat((String) candidate(answer, bankId).get("detail"))
                .contains("the donor does not advertise kv.fetch_gpu@1.0")
                .contains("kv.fetch@1.0");
    }

    @Test
    void explainedDisabledReuseSaysSo() {
        var donor = s.donor(domain, 2, host, Fleet.chain(16));
        Engine target = s.target(domain, 2, host);
        settings.apply(doc -> doc.put("enabled", false));
        Map<String, Object> answer = explain(target.id(), donor.chain(), 0);
        assertNoHint(answer, "DISABLED");
        assertThat(detail(answer)).contains("enabled=false");
    }

    @Test
    void explainedDonorOnAnotherHostIsUnreachable() {
        var donor = s.donor(domain, 2, host, Fleet.chain(16));
        String otherHost = Fleet.host();
        Engine target = s.target(domain, 2, otherHost);
        Map<String, Object> answer = explain(target.id(), donor.chain(), 0);
        assertNoHint(answer, "UNREACHABLE");
        assertThat(candidate(answer, donor.bankId())).containsEntry("reason", "UNREACHABLE");
        assertThat((String) candidate(answer, donor.bankId()).get("detail"))
                .contains(host)
                .contains(otherHost);
    }

    @Test
    void explainedDonorThatLeftReadyNamesItsState() {
        var donor = s.donor(domain, 2, host, Fleet.chain(16));
        Engine target = s.target(domain, 2, host);
        db.sql("UPDATE engine_incarnation SET state = 'DRAINING' WHERE incarnation_id = :i")
                .bind("i", UUID.fromString(donor.engine().id()))
                .then()
                .block(Duration.ofSeconds(5));
        s.awaitDirectory(donor.engine().id());
        Map<String, Object> answer = explain(target.id(), donor.chain(), 0);
        assertNoHint(answer, "DONOR_UNAVAILABLE");
        assertThat((String) candidate(answer, donor.bankId()).get("detail")).contains("DRAINING, not READY");
    }

    @Test
    void explainedCoverageNoLongerThanTheLocalPrefix() {
        var donor = s.donor(domain, 2, host, Fleet.chain(16));
        Engine target = s.target(domain, 2, host);
        Map<String, Object> answer =
                explain(target.id(), SelectionTestSupport.concat(donor.chain(), Fleet.chain(8)), 16);
        assertNoHint(answer, "NO_COVERAGE");
        assertThat(candidate(answer, donor.bankId()))
                .containsEntry("reason", "NO_COVERAGE")
                .containsEntry("coveredBlocks", 16);
    }

    @Test
    void explainedUnknownChainHasNoCandidates() {
        s.donor(domain, 2, host, Fleet.chain(16));
        Engine target = s.target(domain, 2, host);
        Map<String, Object> answer = explain(target.id(), Fleet.chain(16), 0);
        assertNoHint(answer, "NO_COVERAGE");
        assertThat(candidates(answer)).isEmpty();
        assertThat(detail(answer)).contains("no published bank");
    }

    @Test
    void explainedTooFewBlocksAndTooSmallABudget() {
        var donor = s.donor(domain, 2, host, Fleet.chain(12));
        Engine target = s.target(domain, 2, host);
        settings.apply(doc -> doc.put("minFetchBlocks", 8));
        Map<String, Object> few = explain(target.id(), SelectionTestSupport.concat(donor.chain(), Fleet.chain(20)), 6);
        assertNoHint(few, "BELOW_MIN_BLOCKS");
        assertThat((String) candidate(few, donor.bankId()).get("detail"))
                .contains("it would fetch 6 blocks, fewer than minFetchBlocks 8");
        settings.apply(doc -> {
            doc.put("minFetchBlocks", 4);
            doc.put("maxFetchBytes", 2L * 3 * 1048576);
        });
        Map<String, Object> budget = explain(target.id(), donor.chain(), 0);
        assertNoHint(budget, "BUDGET");
        assertThat((String) candidate(budget, donor.bankId()).get("detail")).contains("allows 3 blocks per rank");
    }

    @Test
    void explainedUnprofitableCandidateShowsThePrediction() {
        var donor = s.donor(domain, 2, host, Fleet.chain(16));
        Engine target = s.target(domain, 2, host);
        settings.apply(doc -> doc.put("minGainMs", 500_000.0));
        Map<String, Object> answer = explain(target.id(), donor.chain(), 0);
        assertNoHint(answer, "UNPROFITABLE");
        assertThat((String) candidate(answer, donor.bankId()).get("detail"))
                .contains("the cost model predicts a gain of")
                .contains("minGainMs 500000.0");
    }

    @Test
    void explainedDonorAtItsCap() {
        var donor = s.donor(domain, 2, host, Fleet.chain(16));
        Engine first = s.target(domain, 2, host);
        Engine second = s.target(domain, 2, host);
        settings.apply(doc -> doc.put("maxInflightPerDonor", 1));
        SelectionTestSupport.payload(s.select(first.id(), donor.chain(), 0));
        Map<String, Object> answer = explain(second.id(), donor.chain(), 0);
        assertNoHint(answer, "AT_CAPACITY");
        assertThat((String) candidate(answer, donor.bankId()).get("detail")).contains("maxInflightPerDonor 1");
    }

    @Test
    void batchExplainsOnlyTheSelectionsThatAskIt() {
        var donor = s.donor(domain, 2, host, Fleet.chain(16));
        Engine target = s.target(domain, 2, host);
        Map<String, Object> batch = Map.of(
                "selections",
                List.of(body(target.id(), donor.chain(), 0, true), body(target.id(), Fleet.chain(16), 0, null)));
        Map<String, Object> answer = parse(http.post()
                .uri("/api/v1/donor-selections/batch")
                .header("Authorization", "Bearer " + s.router)
                .contentType(MediaType.APPLICATION_JSON)
                .bodyValue(batch)
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody(String.class)
                .returnResult()
                .getResponseBody());
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> results = (List<Map<String, Object>>) answer.get("results");
        assertThat(results.get(0)).containsEntry("decision", "HINT").containsKey("explanation");
        assertThat(results.get(1)).containsEntry("reason", "NO_COVERAGE").doesNotContainKey("explanation");
    }

    private Map<String, Object> body(String targetId, long[] chain, int local, Boolean explain) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("requestId", "req-" + UUID.randomUUID());
        body.put("targetIncarnationId", targetId);
        body.put(
                "seqHashes",
                Arrays.stream(chain).mapToObj(Long::toUnsignedString).toList());
        body.put("localPrefixBlocks", local);
        body.put("deadlineMs", 10_000);
        if (explain != null) {
            body.put("explain", explain);
        }
        return body;
    }

    private String raw(Map<String, Object> body) {
        return http.post()
                .uri("/api/v1/donor-selections")
                .header("Authorization", "Bearer " + s.router)
                .contentType(MediaType.APPLICATION_JSON)
                .bodyValue(body)
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody(String.class)
                .returnResult()
                .getResponseBody();
    }

    private Map<String, Object> explain(String targetId, long[] chain, int local) {
        Map<String, Object> answer = parse(raw(body(targetId, chain, local, true)));
        assertThat(answer).containsKey("explanation");
        return answer;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> parse(String json) {
        return JSON.readValue(json, LinkedHashMap.class);
    }

    private static void assertNoHint(Map<String, Object> answer, String reason) {
        assertThat(answer)
                .as(answer.toString())
                .containsEntry("decision", "NO_HINT")
                .containsEntry("reason", reason);
        assertThat(detail(answer)).startsWith(reason + ": ");
    }

    @SuppressWarnings("unchecked")
    private static String detail(Map<String, Object> answer) {
        return (String) ((Map<String, Object>) answer.get("explanation")).get("detail");
    }

    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> candidates(Map<String, Object> answer) {
        return (List<Map<String, Object>>) ((Map<String, Object>) answer.get("explanation")).get("candidates");
    }

    private static Map<String, Object> candidate(Map<String, Object> answer, String bankId) {
        return candidates(answer).stream()
                .filter(c -> bankId.equals(c.get("bankId")))
                .findFirst()
                .orElseThrow(() -> new AssertionError("bank " + bankId + " not among " + candidates(answer)));
    }
}
