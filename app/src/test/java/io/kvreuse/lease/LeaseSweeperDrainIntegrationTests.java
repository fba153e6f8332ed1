package io.kvreuse.lease;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.support.Fleet;
import io.kvreuse.support.Fleet.Engine;
import io.kvreuse.support.IntegrationTest;
import io.kvreuse.support.MutableClock;
import io.kvreuse.support.TestTokens;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * Expiry keeps pace with proposals: when more PROPOSED leases are due than one sweep pass takes
 * (the sweep batch), the scheduled sweep runs further passes at once instead of leaving the rest a
 * sweep interval per batch — otherwise, with routers proposing faster than a batch per interval,
 * expired proposals pile up and keep counting against their parties' in-flight caps.
 */
@IntegrationTest
class LeaseSweeperDrainIntegrationTests {

    @Autowired
    WebTestClient http;

    @Autowired
    TestTokens tokens;

    @Autowired
    DatabaseClient db;

    @Autowired
    MutableClock clock;

    @Autowired
    LeaseSweeper sweeper;

    @Autowired
    EngineCommands.LeaseProperties props;

    @AfterEach
    void resetClock() {
        clock.reset();
    }

    @Test
    void moreDueProposalsThanOneBatchAreExpiredByOneScheduledSweep() {
        Fleet fleet = new Fleet(http, tokens);
        String domain = fleet.domain(2, "GPU_CUDA_IPC");
        String host = Fleet.host();
        Engine donor = fleet.ready("DECODE", domain, 2, host);
        String bank = fleet.bank(donor, 2, 64);
        List<LeaseSweeper.SweepResult> passes = List.of();
        Engine target = null;
        // this context's own scheduled sweep may take the due leases first: then start over with new ones
        for (int attempt = 0; attempt < 5; attempt++) {
            // once the scheduled sweep has drained the previous attempt's leases it holds its lock only briefly
            for (long until = System.nanoTime() + 10_000_000_000L;
                    target != null && stillProposed(target) > 0 && System.nanoTime() < until; ) {
                io.kvreuse.support.LeaseWorld.sleep(50);
            }
            target = fleet.ready("PREFILL", domain, 2, host);
            propose(domain, donor, bank, target, props.sweepBatch() + props.sweepBatch() / 2);
            clock.advance(Duration.ofMinutes(2));
            passes = sweeper.sweepUntilDrained().collectList().block(Duration.ofSeconds(60));
            if (passes.getFirst().ran() && passes.getFirst().leasesMoved().size() == props.sweepBatch()) {
                break;
            }
        }
        assertThat(passes.getFirst().leasesMoved())
                .as("the first pass takes one full batch")
                .hasSize(props.sweepBatch());
        assertThat(passes)
                .as("a full batch is followed by another pass at once")
                .hasSizeGreaterThanOrEqualTo(2);
        if (passes.stream().allMatch(LeaseSweeper.SweepResult::ran)) {
            assertThat(stillProposed(target))
                    .as("one scheduled sweep expired them all")
                    .isZero();
        }
    }

    private void propose(String domain, Engine donor, String bank, Engine target, int leases) {
        Instant now = clock.instant();
        List<LeaseProposals.Proposal> group = new ArrayList<>();
        for (int i = 0; i < leases; i++) {
            group.add(TestProposals.proposal(domain, donor.id(), bank, target.id(), now));
        }
        boolean[] admitted = LeaseProposals.proposeWithinCaps(db, group, 1_000_000, 1_000_000)
                .block(Duration.ofSeconds(30));
        assertThat(admitted).hasSize(leases).doesNotContain(false);
    }

    private long stillProposed(Engine target) {
        return db.sql(
                        "SELECT count(*) AS n FROM lease WHERE target_incarnation_id = CAST(:t AS UUID) AND state = 'PROPOSED'")
                .bind("t", target.id())
                .map((r, m) -> r.get("n", Long.class))
                .one()
                .block(Duration.ofSeconds(10));
    }
}
