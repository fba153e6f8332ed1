package io.kvreuse.system;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Steady state of a two-replica deployment: routers select donors on both replicas while donors
 * publish new conversations through the balancer, and every hint runs a full lease lifecycle with
 * real bytes moved by the agents. Both replicas' in-memory indexes give the same answers, each
 * transfer order is handed out once, and the DESIGN invariants hold in PostgreSQL.
 */
class SteadyStateSystemTests {

    static SystemFleet fleet;

    @BeforeAll
    static void fleet() throws Exception {
        fleet = SystemFleet.shared();
    }

    @Test
    void bothReplicasServeLifecyclesGiveTheSameAnswersAndHandOutEachOrderOnce() throws Exception {
        SystemFleet.Size size = fleet.size;
        String since = fleet.now();
        long started = System.nanoTime();
        List<Traffic.Sample> samples;
        Set<String> hinted;
        int published = 0;
        try (Traffic traffic = Traffic.start(fleet, 500)) {
            // new conversations arrive during the load, each through whichever replica the balancer picks
            long end = started + size.load().toNanos();
            int late = size.conversationsPerDonor();
            for (SystemFleet.Host h : fleet.hosts) {
                for (int d = 0; d < h.decodes().size(); d++) {
                    for (int c = 0; c < late; c++) {
                        Thread.sleep(size.load().toMillis()
                                / (2L * late * fleet.hosts.size() * h.decodes().size()));
                        fleet.converse(h, d);
                        published++;
                    }
                }
            }
            Thread.sleep(Math.max(0, (end - System.nanoTime()) / 1_000_000));
            traffic.close();
            samples = traffic.samples();
            hinted = traffic.hintedLeases();
            assertThat(traffic.duplicateLeases())
                    .as("a lease id handed to two routers")
                    .isZero();
        }
        double seconds = (System.nanoTime() - started) / 1e9;
        Map<String, Long> outcomes = Traffic.outcomes(samples);
        assertThat(outcomes.keySet())
                .as("every selection answered 200: " + outcomes)
                .allMatch(k -> k.equals("HINT") || k.startsWith("NO_HINT:"));
        for (int r = 0; r < 2; r++) {
            int replica = r;
            assertThat(samples.stream()
                            .filter(s -> s.replica() == replica && s.decision().equals("HINT")))
                    .as("hints from replica " + r)
                    .isNotEmpty();
        }

        SystemFleet.log("load done: " + outcomes);
        Map<String, Long> states = fleet.awaitLeasesEnded(Duration.ofSeconds(60));
        assertThat(SystemFleet.ended(states)).as("every lease ended: " + states).isTrue();
        assertThat(fleet.scalar(
                        "SELECT count(*) FROM lease WHERE lease_id::text = ANY('{" + String.join(",", hinted) + "}')"))
                .as("every hinted lease is in PostgreSQL")
                .isEqualTo(hinted.size());
        long committed = fleet.scalar("SELECT count(*) FROM lease WHERE state = 'RELEASED' AND outcome = 'COMMITTED'"
                + " AND created_at >= '" + since + "'");
        assertThat(committed).as("full lifecycles").isPositive();
        assertThat(fleet.scalar(
                        "SELECT count(*) FROM transfer_order WHERE claims > 1 AND created_at >= '" + since + "'"))
                .as("orders handed out more than once")
                .isZero();
        assertThat(fleet.scalar("""
                        SELECT count(*) FROM transfer_order o
                        WHERE o.created_at >= '%s'
                          AND (SELECT count(*) FROM transfer_part p WHERE p.order_id = o.order_id) <> 2""".formatted(since)))
                .as("orders without one part per rank")
                .isZero();

        SystemFleet.log("leases ended: " + fleet.leaseOutcomes(since));
        ReplicaAnswers.Comparison same = ReplicaAnswers.compare(fleet);
        assertThat(same.mismatches()).as("replicas answered differently").isEmpty();
        assertThat(same.unexpected())
                .as("answers that do not match the published inventory")
                .isEmpty();
        assertThat(same.hints()).isEqualTo(3 * same.questions() / 4 * 2);

        SystemFleet.log("replicas compared");
        Map<String, Long> after = fleet.awaitLeasesEnded(Duration.ofSeconds(60));
        assertThat(SystemFleet.ended(after)).as("probe leases ended: " + after).isTrue();
        fleet.assertEnginesHealthy();
        fleet.assertInvariants();

        Map<String, Object> results = new LinkedHashMap<>();
        results.put("loadSeconds", String.format("%.1f", seconds));
        results.put("selections", samples.size());
        results.put("selectionsPerSecond", String.format("%.1f", samples.size() / seconds));
        results.put("hints", outcomes.getOrDefault("HINT", 0L));
        results.put("outcomes", outcomes);
        results.put("latencyP50Ms", Traffic.percentileMillis(samples, 50));
        results.put("latencyP99Ms", Traffic.percentileMillis(samples, 99));
        results.put("latencyMaxMs", Traffic.percentileMillis(samples, 100));
        results.put("leasesCommittedAndReleased", committed);
        results.put("leasesByState", after);
        results.put("leasesByOutcome", fleet.leaseOutcomes(since));
        results.put("conversationsPublishedUnderLoad", published);
        results.put("replicaComparisonQuestions", same.questions());
        results.put(
                "transferOrders",
                fleet.scalar("SELECT count(*) FROM transfer_order WHERE created_at >= '" + since + "'"));
        SystemResults.record("steady", results);
    }
}
