package io.kvreuse.lease;

import io.kvreuse.store.ArrayLiteral;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.IntStream;
import org.springframework.r2dbc.core.DatabaseClient;
import reactor.core.publisher.Mono;

/**
 * The in-flight caps, enforced where PROPOSED leases are written, in the one call that writes them
 * ({@code kvreuse_propose_leases}, V93): it inserts the group's leases (one row each: their donors'
 * PIN commands are issued when the donors poll), then ({@code kvreuse_admit_proposals}, V82 and V90)
 * takes a transaction-level advisory lock per donor and per target of the group (in key order, so
 * writers never deadlock), reads each party's leases in flight from its counters once the locks are
 * held — every replica's, since the locks and counters are PostgreSQL's — and admits the group's
 * proposals in order, each counting the ones admitted before it; it removes the rows of those over a
 * cap and adds the admitted to the parties' {@code lease_inflight} counters. {@link LeaseWriter}
 * counts the leases that leave the in-flight states into {@code lease_inflight_end} in the statement
 * that moves them, so admission reads a few rows per party, whatever the number of leases in flight.
 * Selection's in-memory counts ({@code InflightLeases}) only spare the store selections that would
 * certainly be refused.
 *
 * <p>One statement in autocommit, not a transaction of several: the proposal write is on the
 * router's hot path, and the locks are held only for the admission, the counters and the commit,
 * never across a round trip.
 */
final class InflightCaps {

    /** Advisory lock class of in-flight counting ("kvif"); the two-key lock space is apart from the sweepers'. */
    static final int LOCK_CLASS = 0x6b76_6966;

    /**
     * The group in one call ({@code kvreuse_propose_leases}, V93): the leases are inserted by a
     * statement of their own, so its foreign-key checks end before the locks are taken; the locks,
     * the admission per proposal in order, the removal of the rows over a cap and the counters follow.
     */
    static final String PROPOSE = """
            SELECT kvreuse_propose_leases(CAST(:lease AS UUID[]), CAST(:request AS TEXT[]), CAST(:domain AS TEXT[]),
                    CAST(:transport AS TEXT[]), CAST(:donor AS UUID[]), CAST(:donor_epoch AS BIGINT[]),
                    CAST(:bank AS UUID[]), CAST(:bank_epoch AS BIGINT[]), CAST(:target AS UUID[]),
                    CAST(:target_epoch AS BIGINT[]), CAST(:local_prefix AS INTEGER[]), CAST(:hash_from AS INTEGER[]),
                    CAST(:hash_n AS INTEGER[]), CAST(:hashes AS BIGINT[]), CAST(:slot_runs AS TEXT[]),
                    CAST(:mm_lineage AS TEXT[]), CAST(:action AS TEXT[]), CAST(:transfer_ms AS DOUBLE PRECISION[]),
                    CAST(:recompute_ms AS DOUBLE PRECISION[]), CAST(:budget AS BIGINT[]), CAST(:manifest AS INTEGER[]),
                    CAST(:ttl AS BIGINT[]), CAST(:transfer_by AS BIGINT[]), CAST(:abandon_by AS BIGINT[]),
                    :cls, CAST(:keys AS INTEGER[]), :donorCap, :targetCap) AS admitted""";

    /** One proposal's parties. */
    record Parties(UUID donor, UUID target) {}

    private InflightCaps() {}

    /**
     * Locks every party of the group, reads their leases in flight from the counters (work bounded by
     * the group's parties), and keeps the proposals that fit: per proposal, in order, whether it
     * was admitted. {@code columns} binds the group's rows ({@code :lease}, {@code :donor}, … one
     * array per column of {@link #PROPOSE}, in the order of {@code parties}).
     */
    static Mono<boolean[]> proposeWithinCaps(
            DatabaseClient db, Map<String, Object> columns, List<Parties> parties, int maxPerDonor, int maxPerTarget) {
        int n = parties.size();
        return db.sql(PROPOSE)
                .bind("cls", LOCK_CLASS)
                .bind("keys", keys(lockKeys(parties)))
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
    }

    /** The group's lock keys, each once, in the order every writer takes them. */
    static int[] lockKeys(List<Parties> group) {
        return group.stream()
                .flatMapToInt(p -> IntStream.of(key(p.donor()), key(p.target())))
                .distinct()
                .sorted()
                .toArray();
    }

    private static ArrayLiteral.PgArray keys(int[] keys) {
        return new ArrayLiteral(ArrayLiteral.Type.INTEGER, keys.length, 11)
                .addAll(keys)
                .build();
    }

    static int key(UUID id) {
        long x = id.getMostSignificantBits() ^ id.getLeastSignificantBits();
        return (int) (x ^ (x >>> 32));
    }
}
