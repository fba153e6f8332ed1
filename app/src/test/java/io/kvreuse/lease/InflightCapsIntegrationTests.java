package io.kvreuse.lease;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.support.Fleet;
import io.kvreuse.support.Fleet.Engine;
import io.kvreuse.support.IntegrationTest;
import io.kvreuse.support.TestTokens;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.test.web.reactive.server.WebTestClient;
import tools.jackson.databind.json.JsonMapper;

/**
 * The admission rule of {@code kvreuse_admit_leases} and the statement around it against real PostgreSQL: a group counts the
 * stored live leases of its parties and its own earlier admissions, in order, and writes exactly the
 * admitted proposals with one PIN command per donor rank.
 */
@IntegrationTest
class InflightCapsIntegrationTests {

    @Autowired
    WebTestClient http;

    @Autowired
    TestTokens tokens;

    @Autowired
    DatabaseClient db;

    @Autowired
    JsonMapper json;

    Fleet fleet;
    String domain;
    String host;

    @BeforeEach
    void setUp() {
        fleet = new Fleet(http, tokens);
        domain = fleet.domain(2, "GPU_CUDA_IPC");
        host = Fleet.host();
    }

    @Test
    void aProposalRefusedByItsTargetDoesNotTakeItsDonorsPlace() {
        Donor d1 = donor();
        Donor d2 = donor();
        Donor d3 = donor();
        Engine t1 = fleet.ready("PREFILL", domain, 2, host);
        Engine t2 = fleet.ready("PREFILL", domain, 2, host);
        // t1 already holds one live lease (of a third donor)
        assertThat(propose(1, 1, proposal(d3, t1))).containsExactly(true);

        var group = List.of(proposal(d1, t1), proposal(d1, t2), proposal(d2, t2));
        assertThat(propose(1, 1, group.toArray(LeaseProposals.Proposal[]::new))).containsExactly(false, true, false);
        assertThat(stored(group)).containsExactly(false, true, false);
        assertThat(pins(group.get(1))).as("one PIN per donor rank").isEqualTo(2);
        assertThat(pins(group.get(0)) + pins(group.get(2))).isZero();
    }

    @Test
    void aGroupCountsItsOwnEarlierAdmissionsUpToTheCaps() {
        Donor d = donor();
        Engine t = fleet.ready("PREFILL", domain, 2, host);
        var three = List.of(proposal(d, t), proposal(d, t), proposal(d, t));
        assertThat(propose(2, 100, three.toArray(LeaseProposals.Proposal[]::new)))
                .containsExactly(true, true, false);
        assertThat(stored(three)).containsExactly(true, true, false);
        assertThat(propose(100, 2, proposal(d, t)))
                .as("the target's two live leases are counted in the next group")
                .containsExactly(false);
        assertThat(propose(3, 3, proposal(d, t))).containsExactly(true);
    }

    private record Donor(Engine engine, String bankId) {}

    private Donor donor() {
        Engine decode = fleet.ready("DECODE", domain, 2, host);
        return new Donor(decode, fleet.bank(decode, 2, 64));
    }

    private LeaseProposals.Proposal proposal(Donor donor, Engine target) {
        return TestProposals.proposal(domain, donor.engine().id(), donor.bankId(), target.id(), Instant.now());
    }

    private boolean[] propose(int donorCap, int targetCap, LeaseProposals.Proposal... group) {
        var parties = java.util.Arrays.stream(group)
                .map(p -> new InflightCaps.Parties(p.donorId(), p.targetId()))
                .toList();
        return InflightCaps.proposeWithinCaps(
                        db, json.writeValueAsString(List.of(group)), parties, Instant.now(), donorCap, targetCap)
                .block(Duration.ofSeconds(10));
    }

    private List<Boolean> stored(List<LeaseProposals.Proposal> group) {
        return group.stream()
                .map(p -> db.sql("SELECT count(*) AS n FROM lease WHERE lease_id = :id AND state = 'PROPOSED'"
                                + " AND seq_hashes = CAST('{11,-22,33}' AS BIGINT[])")
                        .bind("id", p.leaseId())
                        .map((r, m) -> r.get("n", Long.class) == 1)
                        .one()
                        .block(Duration.ofSeconds(5)))
                .toList();
    }

    private long pins(LeaseProposals.Proposal p) {
        return db.sql("SELECT count(*) AS n FROM engine_command WHERE lease_id = :id AND type = 'PIN'")
                .bind("id", p.leaseId())
                .map((r, m) -> r.get("n", Long.class))
                .one()
                .block(Duration.ofSeconds(5));
    }
}
