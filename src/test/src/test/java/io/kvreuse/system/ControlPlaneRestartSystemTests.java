package io.kvreuse.system;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code kill -9} of the whole control plane (every replica) under load, away for 70 s — longer than
 * {@code lost-after} — then started again. Engines and agents kept heartbeating into the void: a
 * restart is the control plane's absence, not their silence, even when their first heartbeat after it
 * arrives only 5 s after the replicas listen again. They stay READY (ONLINE) at their
 * fencing epochs, no liveness move is audited, and every lease in flight at the crash ends without
 * anything left held.
 */
class ControlPlaneRestartSystemTests {

    static final int DEADLINE_MS = 500;
    static final Duration AWAY = Duration.ofSeconds(70);
    static final Duration HEARD_AFTER = Duration.ofSeconds(5);
    static final Duration FROZEN = Duration.ofSeconds(14);

    static SystemFleet fleet;

    @BeforeAll
    static void fleet() throws Exception {
        fleet = SystemFleet.shared();
    }

    @Test
    void aSeventySecondRestartOfTheWholeControlPlaneMakesNoEngineSuspect() throws Exception {
        String since = fleet.now();
        Map<String, String> before = fleet.readyEngineStates();
        long killedAt;
        long backAt;
        Set<String> inFlight;
        Map<String, String> soonAfter;
        List<Traffic.Sample> samples;
        Set<String> hinted;
        try (Traffic traffic = Traffic.start(fleet, DEADLINE_MS)) {
            Thread.sleep(fleet.size.load().toMillis() / 3);
            long wait = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            inFlight = leasesInFlight();
            while (inFlight.isEmpty() && System.nanoTime() < wait) {
                Thread.sleep(5);
                inFlight = leasesInFlight();
            }
            killedAt = System.nanoTime();
            // engines and agents reach the control plane through the balancer: they are heard again only
            // some seconds after the replicas are back, as with a heartbeat interval of a few seconds
            fleet.balancer.block();
            for (KvReuseProcess replica : fleet.replicas) {
                replica.kill9();
            }
            SystemFleet.log("killed every replica with " + inFlight.size() + " leases in flight");
            Thread.sleep(AWAY.toMillis());
            List<Thread> starts = fleet.replicas.stream()
                    .map(replica -> Thread.ofPlatform().start(() -> {
                        try {
                            replica.start();
                        } catch (Exception e) {
                            throw new IllegalStateException(e);
                        }
                    }))
                    .toList();
            for (Thread start : starts) {
                start.join();
            }
            assertThat(fleet.replicas).as("both replicas started again").allMatch(KvReuseProcess::isAlive);
            backAt = System.nanoTime();
            SystemFleet.log("control plane ready again after " + (backAt - killedAt) / 1_000_000 + " ms");
            // the old code judged the fleet in the first sweep, about a second after the port opened
            Thread.sleep(HEARD_AFTER.toMillis());
            fleet.balancer.unblock();
            Thread.sleep(5_000);
            soonAfter = fleet.engineStates();
            Thread.sleep(Traffic.FAIL_BACK_AFTER.toMillis() + 3_000);
            traffic.close();
            samples = traffic.samples();
            hinted = traffic.hintedLeases();
        }

        assertThat(soonAfter).as("engines right after the restart").isEqualTo(before);
        assertThat(samples)
                .as("both replicas give hints again after the restart")
                .anyMatch(s ->
                        s.replica() == 0 && s.start() > backAt && s.decision().equals("HINT"))
                .anyMatch(s ->
                        s.replica() == 1 && s.start() > backAt && s.decision().equals("HINT"));

        Map<String, Long> states = fleet.awaitLeasesEnded(Duration.ofSeconds(90));
        SystemFleet.log("leases ended: " + fleet.leaseOutcomes(since));
        assertThat(SystemFleet.ended(states)).as("every lease ended: " + states).isTrue();
        Set<String> all = new HashSet<>(hinted);
        all.addAll(inFlight);
        assertThat(fleet.scalar("SELECT count(*) FROM lease WHERE lease_id::text = ANY('{" + String.join(",", all)
                        + "}') AND state IN ('RELEASED', 'EXPIRED')"))
                .as("every lease in flight at the crash, and every hinted one, ended")
                .isEqualTo(all.size());

        // by now suspect-after has passed since the restart: the engines were judged, and found alive
        fleet.assertNobodyJudgedSince(since, before);
        fleet.assertEnginesHealthy();
        fleet.assertInvariants();

        Map<String, Object> results = new LinkedHashMap<>();
        results.put("controlPlaneAwayMs", (backAt - killedAt) / 1_000_000);
        results.put("leasesInFlightAtCrash", inFlight.size());
        results.put("selections", samples.size());
        results.put("outcomes", Traffic.outcomes(samples));
        results.put("leasesByOutcome", fleet.leaseOutcomes(since));
        SystemResults.record("controlPlaneRestart", results);
    }

    /**
     * Every replica frozen (SIGSTOP) for longer than {@code suspect-after}, then running again: no
     * restart, so nothing tells the replicas they were away except that their sweeps stood still. Their
     * clocks jumped; the engines were not silent. They stay READY at their fencing epochs although
     * they are heard only some seconds after the replicas run again.
     */
    @Test
    void aFrozenControlPlaneJudgesNobodyForTheTimeItStoodStill() throws Exception {
        String since = fleet.now();
        Map<String, String> before = fleet.readyEngineStates();
        fleet.balancer.block();
        for (KvReuseProcess replica : fleet.replicas) {
            replica.signal("STOP");
        }
        SystemFleet.log("froze every replica (SIGSTOP)");
        Thread.sleep(FROZEN.toMillis());
        for (KvReuseProcess replica : fleet.replicas) {
            replica.signal("CONT");
        }
        SystemFleet.log("replicas running again (SIGCONT)");
        // a sweeper that judged by the wall clock alone made every engine SUSPECT in its first sweep
        Thread.sleep(HEARD_AFTER.toMillis());
        fleet.balancer.unblock();
        // suspect-after (10 s) has passed since the replicas ran again: the engines were judged
        Thread.sleep(8_000);
        fleet.assertNobodyJudgedSince(since, before);
        fleet.assertEnginesHealthy();
    }

    private static Set<String> leasesInFlight() throws Exception {
        Set<String> ids = new HashSet<>();
        try (Connection c = fleet.jdbc();
                PreparedStatement s = c.prepareStatement("""
                        SELECT lease_id::text FROM lease
                        WHERE state IN ('SOURCE_PINNED', 'TRANSFERRING', 'DELIVERED', 'COMMITTED', 'RELEASING')""");
                ResultSet rs = s.executeQuery()) {
            while (rs.next()) {
                ids.add(rs.getString(1));
            }
        }
        return ids;
    }
}
