package io.kvreuse.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.security.Role;
import io.kvreuse.selection.NoHintReason;
import io.kvreuse.support.Exposition;
import io.kvreuse.support.IntegrationTest;
import io.kvreuse.support.LeaseWorld;
import io.kvreuse.support.OpsFiles;
import io.kvreuse.support.TestTokens;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * The control plane's {@code /actuator/prometheus} after real traffic (a lease through its whole
 * life, a no-hint): kvreuse's families follow Prometheus' naming conventions, the state gauges
 * show what PostgreSQL holds, and every metric the shipped alert rules and dashboard name exists.
 */
@IntegrationTest
class MetricsCatalogIntegrationTests {

    @Autowired
    WebTestClient http;

    @Autowired
    TestTokens tokens;

    @Autowired
    DatabaseClient db;

    @Autowired
    StateGauges gauges;

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
    void afterTrafficEveryKvreuseFamilyFollowsTheNamingConventions() {
        Exposition before = scrape();
        traffic();
        Exposition after = scrape();

        assertThat(after.violations("kvreuse_")).isEmpty();
        assertThat(after.families().keySet())
                .as("the families a control plane serves")
                .contains(
                        "kvreuse_selection_decisions_total",
                        "kvreuse_selection_no_hints_total",
                        "kvreuse_selection_latency_seconds",
                        "kvreuse_selection_predicted_gain_seconds",
                        "kvreuse_lease_transfer_predicted_seconds",
                        "kvreuse_lease_transfer_realised_seconds",
                        "kvreuse_leases",
                        "kvreuse_incarnations",
                        "kvreuse_banks",
                        "kvreuse_node_agents",
                        "kvreuse_fleet_state_age_seconds");
        assertThat(after.sampleNames())
                .noneMatch(n -> n.contains("milliseconds"))
                .noneMatch(n -> n.matches(".*_bytes_.*_bytes.*"))
                .doesNotContain(
                        "kvreuse_selection_predicted_gain_milliseconds_count",
                        "kvreuse_lease_transfer_predicted_milliseconds_count");

        // a hint carries no reason; the reasons are on the no-hints, one series per reason
        List<Exposition.Sample> decisions = after.samples("kvreuse_selection_decisions_total");
        assertThat(decisions).allSatisfy(s -> assertThat(s.labels()).containsOnlyKeys("application", "decision"));
        assertThat(decisions).extracting(s -> s.labels().get("decision")).containsExactlyInAnyOrder("HINT", "NO_HINT");
        assertThat(after.samples("kvreuse_selection_no_hints_total"))
                .allSatisfy(s -> assertThat(s.labels()).containsOnlyKeys("application", "reason"))
                .extracting(s -> s.labels().get("reason"))
                .containsExactlyInAnyOrderElementsOf(
                        Arrays.stream(NoHintReason.values()).map(Enum::name).toList());
        assertThat(delta(before, after, "kvreuse_selection_no_hints_total", "reason", "NO_COVERAGE"))
                .isGreaterThanOrEqualTo(1);
        double noHints = delta(before, after, "kvreuse_selection_decisions_total", "decision", "NO_HINT");
        assertThat(noHints).isGreaterThanOrEqualTo(1);

        // every written lease counts as a transition to PROPOSED: as many as the hints answered
        double hints = delta(before, after, "kvreuse_selection_decisions_total", "decision", "HINT");
        assertThat(hints).isGreaterThanOrEqualTo(1);
        assertThat(delta(before, after, "kvreuse_lease_transitions_total", "to", "PROPOSED"))
                .isEqualTo(hints);
        assertThat(delta(before, after, "kvreuse_lease_transitions_total", "to", "RELEASED"))
                .isGreaterThanOrEqualTo(1);
        assertThat(after.samples("kvreuse_lease_transitions_total"))
                .extracting(s -> s.labels().get("to"))
                .containsOnlyOnce("PROPOSED");

        // transfer times in seconds: the delivered lease was recorded, its sum is not in milliseconds
        assertThat(delta(before, after, "kvreuse_lease_transfer_realised_seconds_count", null, null))
                .isEqualTo(1);
        assertThat(delta(before, after, "kvreuse_lease_transfer_predicted_seconds_sum", null, null))
                .isPositive()
                .isLessThan(10);
        assertThat(delta(before, after, "kvreuse_selection_predicted_gain_seconds_count", null, null))
                .isEqualTo(hints);
        // their buckets resolve milliseconds, and the ratio's resolve around 1 (as predicted)
        for (String histogram : List.of(
                "kvreuse_lease_transfer_predicted_seconds_bucket",
                "kvreuse_lease_transfer_realised_seconds_bucket",
                "kvreuse_selection_predicted_gain_seconds_bucket")) {
            assertThat(bounds(after, histogram)).as(histogram).anyMatch(le -> le <= 0.001);
        }
        assertThat(bounds(after, "kvreuse_lease_transfer_realised_ratio_bucket"))
                .contains(0.5, 1.0, 2.0);
    }

    @Test
    void stateGaugesShowWhatPostgresqlHoldsAndOnlyStatesThatCanStillChange() {
        traffic();
        gauges.refresh().block();
        Exposition e = scrape();

        Map<String, Double> leases = byState(e, "kvreuse_leases");
        assertThat(leases.keySet()).containsExactlyInAnyOrderElementsOf(StateGauges.LEASE_STATES);
        assertThat(leases.keySet()).doesNotContain("RELEASED", "EXPIRED");
        assertThat(leases.values()).noneMatch(v -> v.isNaN() || v < 0);
        Map<String, Double> incarnations = byState(e, "kvreuse_incarnations");
        assertThat(incarnations.keySet()).containsExactlyInAnyOrderElementsOf(StateGauges.INCARNATION_STATES);
        assertThat(incarnations.keySet()).doesNotContain("EXITED", "RECLAIMED");
        assertThat(incarnations.get("READY")).isGreaterThanOrEqualTo(2); // this test's donor and target
        Map<String, Double> banks = byState(e, "kvreuse_banks");
        assertThat(banks.keySet()).containsExactlyInAnyOrderElementsOf(StateGauges.BANK_STATES);
        assertThat(banks.keySet()).doesNotContain("DROPPED");
        assertThat(banks.get("PUBLISHED")).isGreaterThanOrEqualTo(1);
        Map<String, Double> agents = byState(e, "kvreuse_node_agents");
        assertThat(agents.keySet()).containsExactlyInAnyOrderElementsOf(StateGauges.AGENT_STATES);
        assertThat(agents.get("ONLINE")).isGreaterThanOrEqualTo(1);

        // what the gauges say is what PostgreSQL says (read while nothing of this test moves)
        gauges.refresh().block();
        Map<String, Double> now = byState(scrape(), "kvreuse_leases");
        Map<String, Double> stored = new TreeMap<>();
        db.sql("SELECT state, count(*) AS n FROM lease WHERE state NOT IN ('RELEASED', 'EXPIRED') GROUP BY state")
                .map((row, meta) -> Map.entry((String) row.get("state"), ((Number) row.get("n")).doubleValue()))
                .all()
                .doOnNext(en -> stored.put(en.getKey(), en.getValue()))
                .blockLast();
        StateGauges.LEASE_STATES.forEach(s -> stored.putIfAbsent(s, 0.0));
        assertThat(now).isEqualTo(stored);

        double age =
                e.samples("kvreuse_fleet_state_age_seconds").getFirst().value().equals("NaN")
                        ? Double.NaN
                        : Double.parseDouble(e.samples("kvreuse_fleet_state_age_seconds")
                                .getFirst()
                                .value());
        assertThat(age).isBetween(0.0, 10.0);
    }

    @Test
    void everyMetricTheAlertRulesAndTheDashboardNameIsServed() {
        traffic();
        gauges.refresh().block();
        Set<String> served = scrape().sampleNames();
        Map<String, List<String>> used = OpsFiles.usedMetrics();
        // the node agent's metrics are checked against a running agent (AgentMetricsCatalogTests)
        Map<String, List<String>> controlPlane = used.entrySet().stream()
                .filter(en -> !en.getKey().startsWith("kvreuse_agent_"))
                .collect(Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue, (a, b) -> a, TreeMap::new));
        assertThat(controlPlane).as("metrics the rules and dashboard name").hasSizeGreaterThan(20);
        assertThat(controlPlane.keySet())
                .as("named by the rules or the dashboard but not served: %s", controlPlane)
                .allMatch(served::contains);
    }

    /** A lease through its whole life (hint, pin, transfer, delivery, commit, release) and one no-hint. */
    private void traffic() {
        String lease = w.propose();
        w.destination(lease, 0).expectStatus().isOk();
        w.pinAll(lease);
        Map<String, Object> order = w.orders(w.agentToken, w.host, 2000).getFirst();
        w.allParts(order, "DONE");
        w.commands(w.target, 2000);
        w.fleet.post(
                "/api/v1/leases/" + lease + "/commit",
                w.target.token(),
                Map.of("fencingEpoch", w.epoch(w.target), "committedBlocks", 8),
                200);
        long epoch = w.epoch(w.donor);
        for (Map<String, Object> c : w.commands(w.donor, 2000)) {
            w.ack(w.donor, c.get("commandId"), true, epoch).expectStatus().isOk();
        }
        assertThat(w.state(lease)).isEqualTo("RELEASED");
        Map<String, Object> noHint = w.fleet.post(
                "/api/v1/donor-selections",
                tokens.mint(Role.ROUTER),
                Map.of(
                        "requestId",
                        "req-" + UUID.randomUUID(),
                        "targetIncarnationId",
                        w.target.id(),
                        "seqHashes",
                        List.of("12345", "67890"),
                        "localPrefixBlocks",
                        0,
                        "deadlineMs",
                        2000),
                200);
        assertThat(noHint.get("reason")).isEqualTo("NO_COVERAGE");
    }

    private Exposition scrape() {
        String body = http.get()
                .uri("/actuator/prometheus")
                .header("Authorization", "Bearer " + tokens.operator())
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody(String.class)
                .returnResult()
                .getResponseBody();
        return Exposition.parse(body);
    }

    private static double value(Exposition e, String name, String label, String labelValue) {
        return e.samples(name).stream()
                .filter(s -> label == null || labelValue.equals(s.labels().get(label)))
                .mapToDouble(s -> Double.parseDouble(s.value()))
                .sum();
    }

    private static double delta(Exposition before, Exposition after, String name, String label, String value) {
        return value(after, name, label, value) - value(before, name, label, value);
    }

    private static List<Double> bounds(Exposition e, String bucket) {
        return e.samples(bucket).stream()
                .map(s -> s.labels().get("le"))
                .filter(le -> !"+Inf".equals(le))
                .map(Double::parseDouble)
                .toList();
    }

    private static Map<String, Double> byState(Exposition e, String name) {
        Map<String, Double> out = new TreeMap<>();
        e.samples(name).forEach(s -> out.put(s.labels().get("state"), Double.parseDouble(s.value())));
        return out;
    }
}
