package io.kvreuse.orders;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.incarnation.LivenessSweeper;
import io.kvreuse.security.Role;
import io.kvreuse.support.Fleet;
import io.kvreuse.support.IntegrationTest;
import io.kvreuse.support.KeyShareLock;
import io.kvreuse.support.LeaseWorld;
import io.kvreuse.support.MutableClock;
import io.kvreuse.support.TestTokens;
import io.kvreuse.support.UnwatchedTime;
import io.r2dbc.spi.ConnectionFactory;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.web.reactive.server.WebTestClient;

/** Node agents go SUSPECT, then OFFLINE, when their heartbeats stop, and come back with the next one. */
@IntegrationTest
class AgentLivenessIntegrationTests {

    @Autowired
    WebTestClient http;

    @Autowired
    TestTokens tokens;

    @Autowired
    MutableClock clock;

    @Autowired
    AgentLivenessSweeper sweeper;

    @Test
    void silentAgentsGoSuspectThenOfflineAndAHeartbeatBringsThemBack() {
        Fleet fleet = new Fleet(http, tokens);
        String host = Fleet.host();
        String token = tokens.mint(Role.AGENT, "agent-" + UUID.randomUUID(), host);
        register(fleet, host, token);
        assertThat(state(fleet, host)).isEqualTo("ONLINE");

        clock.advance(Duration.ofSeconds(20));
        sweep(host, "SUSPECT", fleet);
        clock.advance(Duration.ofSeconds(45));
        sweep(host, "OFFLINE", fleet);

        fleet.post("/api/v1/agents/" + host + "/heartbeat", token, Map.of(), 200);
        assertThat(state(fleet, host)).isEqualTo("ONLINE");
        assertThat(count(host)).as("SUSPECT and OFFLINE audited").isGreaterThanOrEqualTo(2);
    }

    @Test
    void anAgentSilentPastOfflineAfterIsSuspectForOneSweepBeforeOffline() {
        Fleet fleet = new Fleet(http, tokens);
        String host = registered(fleet);
        clock.advance(Duration.ofSeconds(61));
        // the scheduled sweeper runs too, so count moves in the audit rather than sweeps: a jump
        // straight from ONLINE to OFFLINE would be one ONLINE>OFFLINE row
        sweep(host, "OFFLINE", fleet);
        assertThat(transitions(host)).containsExactly("ONLINE>SUSPECT", "SUSPECT>OFFLINE");
    }

    @Test
    void heartbeatsAHungDatabaseHeldAreNoSilenceOfTheAgent() {
        Fleet fleet = new Fleet(http, tokens);
        String host = registered(fleet);
        sweeper.sweepOnce().block(Duration.ofSeconds(5));
        // the database hangs past the agents' suspect-after (15 s): no sweep reaches it, no heartbeat lands
        clock.advanceUnwatched(Duration.ofSeconds(20));
        try {
            sweeper.sweepOnce().block(Duration.ofSeconds(5));
            clock.advance(Duration.ofSeconds(14));
            sweeper.sweepOnce().block(Duration.ofSeconds(5));
            assertThat(state(fleet, host)).isEqualTo("ONLINE");
            // watched for suspect-after since the database answered again: now the silence counts
            clock.advance(Duration.ofSeconds(2));
            sweep(host, "SUSPECT", fleet);
            assertThat(transitions(host)).containsExactly("ONLINE>SUSPECT");
        } finally {
            UnwatchedTime.settle(clock, engineSweeper, sweeper);
        }
    }

    @Autowired
    LivenessSweeper engineSweeper;

    @Test
    void anAgentAnOpenTransactionReferencesStillGoesSuspect() {
        Fleet fleet = new Fleet(http, tokens);
        String host = registered(fleet);
        clock.advance(Duration.ofSeconds(20));
        // an order being written for this host: the foreign-key check holds FOR KEY SHARE on its row
        try (KeyShareLock held = KeyShareLock.on(connections, "node_agent", "host_id", host)) {
            sweep(host, "SUSPECT", fleet);
        }
    }

    @Autowired
    ConnectionFactory connections;

    /** An agent with one GPU registers for a new host, which it answers: ONLINE from now on the test's clock. */
    private String registered(Fleet fleet) {
        String host = Fleet.host();
        register(fleet, host, tokens.mint(Role.AGENT, "agent-" + UUID.randomUUID(), host));
        return host;
    }

    /** An agent with one GPU registers for {@code host}: ONLINE from now on the test's clock. */
    private static void register(Fleet fleet, String host, String token) {
        fleet.post(
                "/api/v1/agents",
                token,
                Map.of(
                        "hostId", host,
                        "gpus", List.of(Map.of("ordinal", 0, "uuid", "GPU-" + UUID.randomUUID())),
                        "nixlAgents", List.of()),
                201);
    }

    private List<String> transitions(String host) {
        return db.sql(
                        "SELECT from_state || '>' || to_state AS t FROM audit_event"
                                + " WHERE subject_type = 'agent' AND subject_id = :h AND action = 'TRANSITION' ORDER BY event_id")
                .bind("h", host)
                .map((row, meta) -> row.get("t", String.class))
                .all()
                .collectList()
                .block(Duration.ofSeconds(5));
    }

    @Autowired
    org.springframework.r2dbc.core.DatabaseClient db;

    private long count(String host) {
        return db.sql(
                        "SELECT count(*) AS n FROM audit_event WHERE subject_type = 'agent' AND subject_id = :h AND action = 'TRANSITION'")
                .bind("h", host)
                .map((row, meta) -> row.get("n", Long.class))
                .one()
                .block(Duration.ofSeconds(5));
    }

    private void sweep(String host, String expected, Fleet fleet) {
        for (int i = 0; i < 40 && !expected.equals(state(fleet, host)); i++) {
            sweeper.sweepOnce().block(Duration.ofSeconds(5));
            LeaseWorld.sleep(25);
        }
        assertThat(state(fleet, host)).isEqualTo(expected);
    }

    private String state(Fleet fleet, String host) {
        return (String) fleet.get("/api/v1/agents/" + host, tokens.operator()).get("state");
    }
}
