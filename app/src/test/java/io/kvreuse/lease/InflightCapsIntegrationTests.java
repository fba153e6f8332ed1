package io.kvreuse.lease;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.domain.TransportClass;
import io.kvreuse.support.Fleet;
import io.kvreuse.support.Fleet.Engine;
import io.kvreuse.support.IntegrationTest;
import io.kvreuse.support.MutableClock;
import io.kvreuse.support.TestTokens;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * The admission rule of {@code kvreuse_admit_proposals} and the statement around it against real PostgreSQL: a group counts the
 * stored live leases of its parties and its own earlier admissions, in order, and writes exactly the
 * admitted proposals with one PIN command per donor rank.
 */
@IntegrationTest
class InflightCapsIntegrationTests {

    @Autowired
    MutableClock clock;

    @Autowired
    WebTestClient http;

    @Autowired
    TestTokens tokens;

    @Autowired
    DatabaseClient db;

    @Autowired
    LeaseProposals proposals;

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
        assertThat(group.stream().mapToLong(this::pins).sum())
                .as("a proposal is one row: its PINs are issued when the donor polls")
                .isZero();
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

    @Test
    void eachAdmittedProposalIsStoredAsProposedWithItsOwnHashesRunsAndDeadlines() {
        Donor d = donor();
        Engine t = fleet.ready("PREFILL", domain, 2, host);
        Instant now = Instant.parse("2030-01-02T03:04:05.123456789Z");
        var base = TestProposals.proposal(domain, d.engine().id(), d.bankId(), t.id(), now);
        var first = new LeaseProposals.Proposal(
                java.util.UUID.randomUUID(),
                "req-a",
                domain,
                TransportClass.GPU_CUDA_IPC,
                base.donorId(),
                1,
                base.bankId(),
                1,
                base.targetId(),
                1,
                4,
                new long[] {Long.MIN_VALUE, 7, Long.MAX_VALUE, -1},
                new int[] {10, 3, 40, 1},
                "lineage-a",
                "kv.fetch",
                2.5,
                9.25,
                4096,
                512,
                now.plusSeconds(5),
                now.plusSeconds(6),
                now.plusSeconds(7));
        var second = new LeaseProposals.Proposal(
                java.util.UUID.randomUUID(),
                "req-b",
                domain,
                TransportClass.GPU_CUDA_IPC,
                base.donorId(),
                1,
                base.bankId(),
                1,
                base.targetId(),
                1,
                0,
                new long[] {42},
                new int[] {0, 1},
                null,
                "kv.fetch_gpu",
                0.1,
                0.2,
                1,
                2,
                now.plusSeconds(1),
                now.plusSeconds(2),
                now.plusSeconds(3));
        assertThat(propose(100, 100, first, second)).containsExactly(true, true);
        assertThat(row(first))
                .isEqualTo("PROPOSED|req-a|4|4|{-9223372036854775808,7,9223372036854775807,-1}|[[10, 3], [40, 1]]"
                        + "|lineage-a|kv.fetch|2.5|9.25|4096|512"
                        + "|2030-01-02 03:04:10.123457+00|2030-01-02 03:04:11.123457+00|2030-01-02 03:04:12.123457+00");
        assertThat(row(second))
                .isEqualTo("PROPOSED|req-b|0|1|{42}|[[0, 1]]|-|kv.fetch_gpu|0.1|0.2|1|2"
                        + "|2030-01-02 03:04:06.123457+00|2030-01-02 03:04:07.123457+00|2030-01-02 03:04:08.123457+00");
        assertThat(pins(first) + pins(second)).isZero();
    }

    /**
     * A proposal's write answers on the proposals' own event loop, not on the driver's shared loops,
     * where it waited behind the lease reports' result decoding and decisions (25.8 and 32.5 ms a
     * selection during per-request lease lifecycles, 17.1 and 19.1 ms on its own loop).
     */
    @Test
    void aProposalIsAnsweredOnTheProposalsOwnEventLoop() {
        Donor d = donor();
        Engine t = fleet.ready("PREFILL", domain, 2, host);
        String thread = proposals
                .record(proposal(d, t))
                .map(written -> written + " on " + Thread.currentThread().getName())
                .block(Duration.ofSeconds(10));
        assertThat(thread).startsWith("true on kvreuse-proposals");
    }

    /**
     * A lease's hashes are random 64-bit numbers: they are stored uncompressed, and a common hint's
     * (256 blocks) in the lease row itself, so writing a PROPOSED lease writes no row of the lease
     * table's TOAST relation (V96); a hint past a page's worth still goes out of line, uncompressed.
     */
    @Test
    void aProposalsHashesStayInItsRowUncompressedUpToAPage() {
        Donor d = donor();
        Engine t = fleet.ready("PREFILL", domain, 2, host);
        var common = withHashes(d, t, 256);
        var large = withHashes(d, t, 2048);
        assertThat(propose(100, 100, common, large)).containsExactly(true, true);
        assertThat(storage(common)).isEqualTo("inline|uncompressed|full size");
        assertThat(storage(large)).isEqualTo("out of line|uncompressed|full size");
    }

    private LeaseProposals.Proposal withHashes(Donor donor, Engine target, int n) {
        long[] hashes = new java.util.SplittableRandom(n).longs(n).toArray();
        return TestProposals.proposal(
                domain, donor.engine().id(), donor.bankId(), target.id(), clock.instant(), hashes);
    }

    /** How a stored lease's hashes are kept: in the row or not, compressed or not, stored at full size or not. */
    private String storage(LeaseProposals.Proposal p) {
        return db.sql("""
                        SELECT concat_ws('|',
                            CASE WHEN pg_column_toast_chunk_id(seq_hashes) IS NULL THEN 'inline' ELSE 'out of line' END,
                            COALESCE(pg_column_compression(seq_hashes), 'uncompressed'),
                            CASE WHEN pg_column_size(seq_hashes) >= 8 * cardinality(seq_hashes) THEN 'full size'
                                 ELSE 'smaller' END) AS s
                        FROM lease WHERE lease_id = :id
                        """)
                .bind("id", p.leaseId())
                .map((r, m) -> r.get("s", String.class))
                .one()
                .block(Duration.ofSeconds(5));
    }

    /** The stored lease row's columns a proposal sets, as text, '|' between them. */
    private String row(LeaseProposals.Proposal p) {
        return db.sql("""
                        SELECT concat_ws('|', state, request_id, local_prefix_blocks, fetch_blocks, seq_hashes,
                            source_slot_runs, COALESCE(mm_lineage, '-'), action_type, predicted_transfer_ms,
                            predicted_recompute_ms, budget_bytes, manifest_bytes,
                            to_char(ttl_deadline AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US') || '+00',
                            to_char(transfer_deadline AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US') || '+00',
                            to_char(abandon_deadline AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US') || '+00') AS r
                        FROM lease WHERE lease_id = :id AND domain_id = :domain AND donor_incarnation_id = :donor
                          AND bank_id = :bank AND target_incarnation_id = :target AND transport_class = 'GPU_CUDA_IPC'
                        """)
                .bind("id", p.leaseId())
                .bind("domain", p.domainId())
                .bind("donor", p.donorId())
                .bind("bank", p.bankId())
                .bind("target", p.targetId())
                .map((r, m) -> r.get("r", String.class))
                .one()
                .block(Duration.ofSeconds(5));
    }

    private record Donor(Engine engine, String bankId) {}

    private Donor donor() {
        Engine decode = fleet.ready("DECODE", domain, 2, host);
        return new Donor(decode, fleet.bank(decode, 2, 64));
    }

    private LeaseProposals.Proposal proposal(Donor donor, Engine target) {
        // deadlines on the control plane's clock: the context's clock is shared with tests that move it
        // ahead, and a proposal whose TTL has passed on that clock is expired by the next sweep,
        // which would take it out of the counts this class checks
        return TestProposals.proposal(domain, donor.engine().id(), donor.bankId(), target.id(), clock.instant());
    }

    private boolean[] propose(int donorCap, int targetCap, LeaseProposals.Proposal... group) {
        return LeaseProposals.proposeWithinCaps(db, List.of(group), donorCap, targetCap)
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
