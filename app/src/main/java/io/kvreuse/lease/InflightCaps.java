package io.kvreuse.lease;

import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Stream;
import org.springframework.r2dbc.core.DatabaseClient;
import reactor.core.publisher.Mono;

/**
 * The in-flight caps, enforced where PROPOSED leases are written, in the one statement that writes
 * them: its first step ({@code kvreuse_admit_proposals}, migrations V82 and V90, which writes nothing)
 * takes a transaction-level advisory lock per donor and per target of the group (in key order, so
 * writers never deadlock), reads each party's leases in flight from its counters once the locks are
 * held — every replica's, since the locks and counters are PostgreSQL's — and admits the group's
 * proposals in order, each counting the ones admitted before it; the same statement then inserts the
 * admitted leases, their donors' PIN commands (one per donor rank, visible at once) and adds them to
 * the parties' {@code lease_inflight} counters. {@link LeaseWriter} counts the leases that leave the
 * in-flight states into {@code lease_inflight_end} in the statement that moves them, so admission
 * reads a few rows per party, whatever the number of leases in flight. Selection's in-memory counts ({@code InflightLeases}) only spare the store selections that
 * would certainly be refused.
 *
 * <p>One statement in autocommit, not a transaction of several: the proposal write is on the
 * router's hot path, and the locks are held only while PostgreSQL works, never across a round trip.
 */
final class InflightCaps {

    /** Advisory lock class of in-flight counting ("kvif"); the two-key lock space is apart from the sweepers'. */
    static final int LOCK_CLASS = 0x6b76_6966;

    /** The group's rows: one array per column, in the group's order; deadlines in epoch microseconds. */
    private static final String ROWS = """
            unnest(CAST(:lease AS UUID[]), CAST(:request AS TEXT[]), CAST(:domain AS TEXT[]),
                    CAST(:transport AS TEXT[]), CAST(:donor AS UUID[]), CAST(:donor_epoch AS BIGINT[]),
                    CAST(:bank AS UUID[]), CAST(:bank_epoch AS BIGINT[]), CAST(:target AS UUID[]),
                    CAST(:target_epoch AS BIGINT[]), CAST(:local_prefix AS INTEGER[]), CAST(:hash_from AS INTEGER[]),
                    CAST(:hash_n AS INTEGER[]), CAST(:slot_runs AS TEXT[]), CAST(:mm_lineage AS TEXT[]),
                    CAST(:action AS TEXT[]), CAST(:transfer_ms AS DOUBLE PRECISION[]),
                    CAST(:recompute_ms AS DOUBLE PRECISION[]), CAST(:budget AS BIGINT[]), CAST(:manifest AS INTEGER[]),
                    CAST(:ttl AS BIGINT[]), CAST(:transfer_by AS BIGINT[]), CAST(:abandon_by AS BIGINT[]))
                WITH ORDINALITY AS p(lease_id, request_id, domain_id, transport, donor, donor_epoch, bank, bank_epoch,
                    target, target_epoch, local_prefix, hash_from, hash_n, slot_runs, mm_lineage, action, transfer_ms,
                    recompute_ms, budget, manifest, ttl, transfer_by, abandon_by, n)""";

    /**
     * The leases of {@code plan} and their donors' PIN commands (one per donor rank, visible at once);
     * the group's fetched hashes are one array, each proposal's a slice ({@code hash_from}, {@code hash_n}).
     */
    private static final String INSERTS = """
            proposed AS (
                INSERT INTO lease (lease_id, request_id, state, domain_id, donor_incarnation_id, donor_epoch, bank_id,
                    bank_epoch, target_incarnation_id, target_epoch, local_prefix_blocks, fetch_blocks, seq_hashes,
                    transport_class, predicted_transfer_ms, predicted_recompute_ms, budget_bytes, manifest_bytes,
                    ttl_deadline, transfer_deadline, abandon_deadline, source_slot_runs, mm_lineage, action_type)
                SELECT lease_id, request_id, 'PROPOSED', domain_id, donor, donor_epoch, bank, bank_epoch, target,
                    target_epoch, local_prefix, hash_n, (CAST(:hashes AS BIGINT[]))[hash_from + 1 : hash_from + hash_n],
                    transport, transfer_ms, recompute_ms, budget, manifest,
                    TIMESTAMPTZ 'epoch' + ttl * INTERVAL '1 microsecond',
                    TIMESTAMPTZ 'epoch' + transfer_by * INTERVAL '1 microsecond',
                    TIMESTAMPTZ 'epoch' + abandon_by * INTERVAL '1 microsecond',
                    CAST(slot_runs AS JSONB), mm_lineage, action
                FROM plan ORDER BY n
                RETURNING lease_id, donor_incarnation_id, created_at),
            pins AS (
                INSERT INTO engine_command (command_id, incarnation_id, lease_id, type, rank, created_at, visible_at)
                SELECT gen_random_uuid(), l.donor_incarnation_id, l.lease_id, 'PIN', r.rank, l.created_at, '-infinity'
                FROM proposed l JOIN incarnation_rank r ON r.incarnation_id = l.donor_incarnation_id
                RETURNING 1 AS one)""";

    /** Adds the admitted proposals of {@code plan} to their parties' counters, under the locks {@code admission} took. */
    private static final String COUNTED = """
            counted AS (
                INSERT INTO lease_inflight (incarnation_id, side, admitted)
                SELECT party, side, count(*) FROM admission, (SELECT donor AS party, 'D' AS side FROM plan
                                                              UNION ALL SELECT target, 'T' FROM plan) AS parties
                GROUP BY party, side ORDER BY party, side
                ON CONFLICT (incarnation_id, side) DO UPDATE SET admitted = lease_inflight.admitted + EXCLUDED.admitted)""";

    /**
     * Inserts the whole group, then takes the locks and admits it, all or none: the inserts run before
     * the function is called (they are its last argument), so the locks are held only for the
     * admission, the counters and the commit. A group that does not fit entirely fails with {@code
     * KV001}, which undoes the statement.
     */
    static final String LOCKS_LAST = "WITH plan AS (SELECT p.* FROM " + ROWS + "),\n" + INSERTS + """
            ,
            admission AS MATERIALIZED (
                SELECT kvreuse_admit_proposals(CAST(:donor AS UUID[]), CAST(:target AS UUID[]), :cls,
                    CAST(:keys AS INTEGER[]), :donorCap, :targetCap, TRUE,
                    (SELECT count(*) FROM proposed) + (SELECT count(*) FROM pins)) AS admitted),
            """ + COUNTED
            + "\nSELECT admitted FROM admission";

    /** Takes the locks and admits the group first, then inserts what was admitted; answers the admissions. */
    static final String LOCKS_FIRST = """
            WITH admission AS MATERIALIZED (
                SELECT kvreuse_admit_proposals(CAST(:donor AS UUID[]), CAST(:target AS UUID[]), :cls,
                    CAST(:keys AS INTEGER[]), :donorCap, :targetCap, FALSE, 0) AS admitted),
            plan AS (SELECT p.* FROM admission, """ + ROWS + " WHERE admission.admitted[p.n]),\n" + INSERTS + ",\n"
            + COUNTED + "\nSELECT admitted FROM admission";

    /** The SQLSTATE of a group {@link #LOCKS_LAST} could not admit entirely. */
    static final String OVER_CAP = "KV001";

    /** One proposal's parties. */
    record Parties(UUID donor, UUID target) {}

    private InflightCaps() {}

    /**
     * Locks every party of the group, reads their leases in flight from the counters (work bounded by
     * the group's parties), and inserts the proposals that fit: per proposal, in order, whether it
     * was admitted. {@code columns} binds the group's rows ({@code :lease}, {@code :donor}, … one
     * array per column of {@link #LOCKS_FIRST}, in the order of {@code parties}).
     */
    static Mono<boolean[]> proposeWithinCaps(
            DatabaseClient db, Map<String, Object> columns, List<Parties> parties, int maxPerDonor, int maxPerTarget) {
        int n = parties.size();
        java.util.function.Function<String, Mono<boolean[]>> run = sql -> db.sql(sql)
                .bind("cls", LOCK_CLASS)
                .bind("keys", lockKeys(parties))
                .bind("donorCap", maxPerDonor)
                .bind("targetCap", maxPerTarget)
                .bindValues(columns)
                .map((r, m) -> r.get("admitted", Boolean[].class))
                .one()
                .map(admitted -> {
                    if (admitted.length != n) {
                        throw new IllegalStateException(
                                "the store answered " + admitted.length + " admissions for " + n);
                    }
                    boolean[] answers = new boolean[n];
                    for (int i = 0; i < n; i++) {
                        answers[i] = Boolean.TRUE.equals(admitted[i]);
                    }
                    return answers;
                });
        return run.apply(LOCKS_LAST).onErrorResume(InflightCaps::overCap, e -> run.apply(LOCKS_FIRST));
    }

    /** Whether {@code e} is a group {@link #LOCKS_LAST} refused because it did not fit entirely. */
    static boolean overCap(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof io.r2dbc.spi.R2dbcException r && OVER_CAP.equals(r.getSqlState())) {
                return true;
            }
        }
        return false;
    }

    /** The group's lock keys, each once, in the order every writer takes them. */
    static Integer[] lockKeys(List<Parties> group) {
        return group.stream()
                .flatMap(p -> Stream.of(key(p.donor()), key(p.target())))
                .distinct()
                .sorted()
                .toArray(Integer[]::new);
    }

    static int key(UUID id) {
        long x = id.getMostSignificantBits() ^ id.getLeastSignificantBits();
        return (int) (x ^ (x >>> 32));
    }
}
