package io.kvreuse.lease;

import java.time.Instant;
import java.time.ZoneOffset;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Function;
import java.util.stream.Stream;
import org.springframework.r2dbc.core.DatabaseClient;
import reactor.core.publisher.Mono;

/**
 * The in-flight caps, enforced where PROPOSED leases are written, inside the writing transaction:
 * it takes a transaction-level advisory lock per donor and per target of the group (in key order,
 * so writers never deadlock), counts the live leases of each in PostgreSQL — every replica's, since
 * the locks are PostgreSQL's — and admits the group's proposals in order, each counting the ones
 * admitted before it. Selection's in-memory counts ({@code InflightLeases}) only spare the store
 * selections that would certainly be refused.
 */
final class InflightCaps {

    /** Advisory lock class of in-flight counting ("kvif"); the two-key lock space is apart from the sweepers'. */
    static final int LOCK_CLASS = 0x6b76_6966;

    /** Live leases, as the partial indexes {@code lease_active_donor} and {@code lease_active_target} hold them. */
    static final String LIVE = """
            state IN ('PROPOSED', 'SOURCE_PINNED', 'TRANSFERRING', 'DELIVERED', 'UNCERTAIN', 'RELEASING')
            AND (state <> 'PROPOSED' OR ttl_deadline > :now)""";

    /** Live leases of each donor and each target already stored. */
    record Counts(Map<UUID, Integer> donors, Map<UUID, Integer> targets) {}

    /** One proposal's parties. */
    record Parties(UUID donor, UUID target) {}

    private InflightCaps() {}

    /**
     * Locks every party of the group and reads their live leases, each count stopping at its cap
     * (work bounded by parties × cap); call inside the writing transaction.
     */
    static Mono<Counts> lockAndCount(
            DatabaseClient db, List<Parties> group, Instant now, int maxPerDonor, int maxPerTarget) {
        Integer[] keys = group.stream()
                .flatMap(p -> Stream.of(key(p.donor()), key(p.target())))
                .distinct()
                .toArray(Integer[]::new);
        Counts counts = new Counts(new HashMap<>(), new HashMap<>());
        // the count is its own statement: its snapshot must begin after the locks are held
        return db.sql("""
                        SELECT pg_advisory_xact_lock(:cls, k) IS NULL AS locked
                        FROM (SELECT k FROM unnest(CAST(:keys AS INTEGER[])) AS k ORDER BY k) AS ordered
                        """)
                .bind("cls", LOCK_CLASS)
                .bind("keys", keys)
                .map((r, m) -> 1)
                .all()
                .then(db.sql(COUNT)
                        .bind("donors", ids(group, Parties::donor))
                        .bind("targets", ids(group, Parties::target))
                        .bind("donorCap", maxPerDonor)
                        .bind("targetCap", maxPerTarget)
                        .bind("now", now.atOffset(ZoneOffset.UTC))
                        .map((r, m) -> {
                            var side = "D".equals(r.get("side", String.class)) ? counts.donors() : counts.targets();
                            side.put(
                                    r.get("id", UUID.class),
                                    r.get("n", Long.class).intValue());
                            return 1;
                        })
                        .all()
                        .then())
                .thenReturn(counts);
    }

    private static final String COUNT = "SELECT d.id, 'D' AS side, (SELECT count(*) FROM (SELECT 1 FROM lease"
            + " WHERE donor_incarnation_id = d.id AND " + LIVE + " LIMIT :donorCap) AS l) AS n"
            + " FROM unnest(CAST(:donors AS UUID[])) AS d(id) UNION ALL"
            + " SELECT t.id, 'T', (SELECT count(*) FROM (SELECT 1 FROM lease"
            + " WHERE target_incarnation_id = t.id AND " + LIVE + " LIMIT :targetCap) AS l)"
            + " FROM unnest(CAST(:targets AS UUID[])) AS t(id)";

    private static String[] ids(List<Parties> group, Function<Parties, UUID> side) {
        return group.stream().map(side).distinct().map(UUID::toString).toArray(String[]::new);
    }

    /**
     * Which proposals of the group fit under the caps, in order: each counts the stored live leases
     * of its donor and target and the proposals of the group admitted before it.
     */
    static boolean[] admit(List<Parties> group, Counts stored, int maxPerDonor, int maxPerTarget) {
        Map<UUID, Integer> donors = new HashMap<>(stored.donors());
        Map<UUID, Integer> targets = new HashMap<>(stored.targets());
        boolean[] admitted = new boolean[group.size()];
        for (int i = 0; i < admitted.length; i++) {
            Parties p = group.get(i);
            int d = donors.getOrDefault(p.donor(), 0);
            int t = targets.getOrDefault(p.target(), 0);
            if (d < maxPerDonor && t < maxPerTarget) {
                admitted[i] = true;
                donors.put(p.donor(), d + 1);
                targets.put(p.target(), t + 1);
            }
        }
        return admitted;
    }

    static int key(UUID id) {
        long x = id.getMostSignificantBits() ^ id.getLeastSignificantBits();
        return (int) (x ^ (x >>> 32));
    }
}
