package io.kvreuse.system;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code kill -9} of the control-plane replica that engines and agents mostly talk to, under load:
 * routers fail over to the other replica, which keeps answering; engines and agents reconnect
 * through the balancer. The killed replica is started again, rebuilds its index from PostgreSQL
 * (including a conversation published while it was down) and gives the same answers as the other.
 * No lease that held memory at the crash is lost or ends twice.
 */
class ReplicaCrashSystemTests {

    static final int DEADLINE_MS = 500;

    static SystemFleet fleet;

    @BeforeAll
    static void fleet() throws Exception {
        fleet = SystemFleet.shared();
    }

    @Test
    void survivorKeepsServingAndTheRestartedReplicaRejoinsWithTheSameAnswers() throws Exception {
        KvReuseProcess victim = fleet.replicas.get(0);
        int survivor = 1;
        String since = fleet.now();
        long started = System.nanoTime();
        long killedAt;
        long restartedAt;
        long backAt;
        Set<String> durable;
        List<Traffic.Sample> samples;
        Set<String> hinted;
        try (Traffic traffic = Traffic.start(fleet, DEADLINE_MS)) {
            Thread.sleep(fleet.size.load().toMillis() / 3);
            // crash while some lease holds memory (lifecycles take well under a second here)
            long wait = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            durable = durableLeases();
            while (durable.isEmpty() && System.nanoTime() < wait) {
                Thread.sleep(5);
                durable = durableLeases();
            }
            long pid = victim.pid();
            killedAt = System.nanoTime();
            victim.kill9();
            SystemFleet.log("killed replica 0 (pid " + pid + ") with " + durable.size() + " leases holding memory");
            // inventory published while the replica is down: it must find it in PostgreSQL when it restarts
            fleet.converseEverywhere();
            Thread.sleep(fleet.size.outage().toMillis());
            restartedAt = System.nanoTime();
            victim.start();
            backAt = System.nanoTime();
            SystemFleet.log("replica 0 ready again after " + (backAt - restartedAt) / 1_000_000 + " ms");
            Thread.sleep(Traffic.FAIL_BACK_AFTER.toMillis() + 3_000);
            traffic.close();
            samples = traffic.samples();
            hinted = traffic.hintedLeases();
            assertThat(traffic.duplicateLeases())
                    .as("a lease id handed to two routers")
                    .isZero();
        }
        double seconds = (System.nanoTime() - started) / 1e9;

        List<Traffic.Sample> down = samples.stream()
                .filter(s -> s.start() >= killedAt && s.start() < backAt)
                .toList();
        List<Traffic.Sample> survivorDown =
                down.stream().filter(s -> s.replica() == survivor).toList();
        assertThat(survivorDown)
                .as("the survivor served while the other was down")
                .isNotEmpty();
        assertThat(Traffic.outcomes(survivorDown).keySet())
                .as("the survivor answered every call (no 5xx, no hang past the router's timeout): "
                        + Traffic.outcomes(survivorDown))
                .allMatch(k -> k.equals("HINT") || k.startsWith("NO_HINT:"));
        assertThat(survivorDown).anyMatch(s -> s.decision().equals("HINT"));
        assertThat(Traffic.outcomes(
                                samples.stream().filter(s -> s.status() != 0).toList())
                        .keySet())
                .as("no 5xx from either replica")
                .allMatch(k -> !k.startsWith("HTTP 5"));
        assertThat(samples)
                .as("the restarted replica serves routers again")
                .anyMatch(s ->
                        s.replica() == 0 && s.start() > backAt && s.decision().equals("HINT"));
        long gapMs = Traffic.longestGapMillis(samples, killedAt, restartedAt);

        Map<String, Long> states = fleet.awaitLeasesEnded(Duration.ofSeconds(90));
        SystemFleet.log("leases ended: " + fleet.leaseOutcomes(since));
        assertThat(SystemFleet.ended(states)).as("every lease ended: " + states).isTrue();
        Set<String> all = new HashSet<>(hinted);
        all.addAll(durable);
        assertThat(fleet.scalar("SELECT count(*) FROM lease WHERE lease_id::text = ANY('{" + String.join(",", all)
                        + "}') AND state IN ('RELEASED', 'EXPIRED')"))
                .as("every hinted lease and every lease holding memory at the crash ended in PostgreSQL")
                .isEqualTo(all.size());
        assertThat(fleet.scalar("SELECT count(*) FROM (SELECT request_id FROM lease WHERE created_at >= '" + since
                        + "' GROUP BY request_id HAVING count(*) > 1) AS twice"))
                .as("a request with two leases")
                .isZero();

        ReplicaAnswers.Comparison same = ReplicaAnswers.compare(fleet);
        assertThat(same.mismatches())
                .as("the restarted replica answers like the other")
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
        results.put("failoverGapMs", gapMs);
        results.put("replicaDownMs", (backAt - killedAt) / 1_000_000);
        results.put("replicaRestartToReadyMs", (backAt - restartedAt) / 1_000_000);
        results.put("selections", samples.size());
        results.put("outcomes", Traffic.outcomes(samples));
        results.put("survivorAnswersWhileDown", survivorDown.size());
        results.put("survivorLatencyP50Ms", Traffic.percentileMillis(survivorDown, 50));
        results.put("survivorLatencyP99Ms", Traffic.percentileMillis(survivorDown, 99));
        results.put("survivorLatencyMaxMs", Traffic.percentileMillis(survivorDown, 100));
        results.put(
                "survivorAnswersOverDeadline",
                survivorDown.stream()
                        .filter(s -> s.micros() > DEADLINE_MS * 1_000L)
                        .count());
        results.put("leasesHoldingMemoryAtCrash", durable.size());
        results.put("leasesCreated", fleet.scalar("SELECT count(*) FROM lease WHERE created_at >= '" + since + "'"));
        results.put("leasesByOutcome", fleet.leaseOutcomes(since));
        SystemResults.record("replicaCrash", results);
    }

    private static Set<String> durableLeases() throws Exception {
        Set<String> ids = new HashSet<>();
        try (Connection c = fleet.jdbc();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("""
                        SELECT lease_id::text FROM lease
                        WHERE state IN ('SOURCE_PINNED', 'TRANSFERRING', 'DELIVERED', 'COMMITTED', 'UNCERTAIN', 'RELEASING')""")) {
            while (rs.next()) {
                ids.add(rs.getString(1));
            }
        }
        return ids;
    }
}
