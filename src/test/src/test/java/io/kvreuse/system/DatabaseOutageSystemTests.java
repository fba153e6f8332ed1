package io.kvreuse.system;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * PostgreSQL stopped under load and started again on the same port and data directory. While it is
 * down, routers get {@code 200 NO_HINT} (STORE_UNAVAILABLE, or another no-hint) within their
 * deadline from both replicas — no hangs, no 5xx. Once it is back, each replica recovers by itself
 * within 5 s (the bound: its first hint for a request sent after the database returned),
 * new inventory reaches both indexes, and the DESIGN invariants hold.
 */
class DatabaseOutageSystemTests {

    static final int DEADLINE_MS = 500;
    static final Duration RECOVERY_BOUND = Duration.ofSeconds(5);
    static final Set<String> FAIL_OPEN = Set.of(
            "NO_HINT:STORE_UNAVAILABLE",
            "NO_HINT:DEADLINE",
            "NO_HINT:AT_CAPACITY",
            "NO_HINT:DONOR_UNAVAILABLE",
            "NO_HINT:NO_COVERAGE");

    static SystemFleet fleet;

    @BeforeAll
    static void fleet() throws Exception {
        fleet = SystemFleet.shared();
    }

    @Test
    void selectionsFailOpenWhileTheDatabaseIsDownAndRecoverWithinFiveSecondsOfItsReturn() throws Exception {
        String since = fleet.now();
        long started = System.nanoTime();
        long stoppedAt;
        long downAt;
        long restartAt;
        long upAt;
        long[] recoveredAt = new long[fleet.replicas.size()];
        List<Traffic.Sample> samples;
        Set<String> hinted;
        try (Traffic traffic = Traffic.start(fleet, DEADLINE_MS)) {
            Thread.sleep(fleet.size.load().toMillis() / 3);
            stoppedAt = System.nanoTime();
            fleet.database.stop();
            downAt = System.nanoTime();
            SystemFleet.log("database stopped in " + (downAt - stoppedAt) / 1_000_000 + " ms");
            Thread.sleep(fleet.size.outage().toMillis());
            restartAt = System.nanoTime();
            fleet.database.start();
            upAt = System.nanoTime();
            SystemFleet.log("database accepting connections again after " + (upAt - restartAt) / 1_000_000 + " ms");
            long giveUp = upAt + Duration.ofSeconds(30).toNanos();
            while (System.nanoTime() < giveUp && (recoveredAt[0] == 0 || recoveredAt[1] == 0)) {
                Thread.sleep(100);
                for (int r = 0; r < recoveredAt.length; r++) {
                    int replica = r;
                    Optional<Traffic.Sample> first = traffic.samples().stream()
                            .filter(s -> s.replica() == replica
                                    && s.start() >= upAt
                                    && s.decision().equals("HINT"))
                            .findFirst();
                    recoveredAt[r] = first.map(Traffic.Sample::end).orElse(0L);
                }
            }
            Thread.sleep(3_000);
            traffic.close();
            samples = traffic.samples();
            hinted = traffic.hintedLeases();
        }
        double seconds = (System.nanoTime() - started) / 1e9;

        List<Traffic.Sample> outage = samples.stream()
                .filter(s -> s.start() >= downAt && s.end() < restartAt)
                .toList();
        Map<String, Long> outageOutcomes = Traffic.outcomes(outage);
        SystemFleet.log("during the outage: " + outageOutcomes);
        assertThat(outage).as("routers kept asking during the outage").isNotEmpty();
        assertThat(outageOutcomes.keySet())
                .as("every selection during the outage answered 200 with a fail-open no-hint: " + outageOutcomes)
                .isSubsetOf(FAIL_OPEN);
        assertThat(outageOutcomes).containsKey("NO_HINT:STORE_UNAVAILABLE");
        assertThat(Traffic.outcomes(samples).keySet())
                .as("no 5xx and no call without an answer, before, during or after the outage")
                .allMatch(k -> k.equals("HINT") || k.startsWith("NO_HINT:"));
        long[] recoveryMs = new long[recoveredAt.length];
        for (int r = 0; r < recoveredAt.length; r++) {
            assertThat(recoveredAt[r]).as("replica " + r + " gave a hint again").isPositive();
            recoveryMs[r] = (recoveredAt[r] - upAt) / 1_000_000;
            assertThat(Duration.ofMillis(recoveryMs[r]))
                    .as("replica " + r + " recovered by itself within 5 s of the database's return")
                    .isLessThanOrEqualTo(RECOVERY_BOUND);
        }

        Map<String, Long> states = fleet.awaitLeasesEnded(Duration.ofSeconds(90));
        SystemFleet.log("leases ended: " + fleet.leaseOutcomes(since));
        assertThat(SystemFleet.ended(states)).as("every lease ended: " + states).isTrue();
        assertThat(fleet.scalar(
                        "SELECT count(*) FROM lease WHERE lease_id::text = ANY('{" + String.join(",", hinted) + "}')"))
                .as("every lease a router was given survived the outage")
                .isEqualTo(hinted.size());

        // inventory published after the outage reaches both replicas' indexes (their change feeds reconnected)
        fleet.converseEverywhere();
        ReplicaAnswers.Comparison same = ReplicaAnswers.compare(fleet);
        assertThat(same.mismatches())
                .as("replicas answer alike after the outage")
                .isEmpty();
        assertThat(same.unexpected())
                .as("answers that do not match the published inventory")
                .isEmpty();
        Map<String, Long> after = fleet.awaitLeasesEnded(Duration.ofSeconds(60));
        assertThat(SystemFleet.ended(after)).as("probe leases ended: " + after).isTrue();
        fleet.assertEnginesHealthy();
        fleet.assertInvariants();

        Map<String, Object> results = new LinkedHashMap<>();
        results.put("scenarioSeconds", String.format("%.1f", seconds));
        results.put("outageMs", (restartAt - downAt) / 1_000_000);
        results.put("databaseRestartMs", (upAt - restartAt) / 1_000_000);
        results.put("recoveryMsReplica0", recoveryMs[0]);
        results.put("recoveryMsReplica1", recoveryMs[1]);
        results.put("selections", samples.size());
        results.put("outcomes", Traffic.outcomes(samples));
        results.put("outageOutcomes", outageOutcomes);
        results.put("outageLatencyP50Ms", Traffic.percentileMillis(outage, 50));
        results.put("outageLatencyP99Ms", Traffic.percentileMillis(outage, 99));
        results.put("outageLatencyMaxMs", Traffic.percentileMillis(outage, 100));
        results.put(
                "outageAnswersOverDeadline",
                outage.stream().filter(s -> s.micros() > DEADLINE_MS * 1_000L).count());
        results.put("leasesByOutcome", fleet.leaseOutcomes(since));
        SystemResults.record("databaseOutage", results);
    }
}
