package io.kvreuse.lease;

import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.UUID;
import java.util.stream.Stream;
import org.springframework.r2dbc.core.DatabaseClient;
import reactor.core.publisher.Mono;

/**
 * The in-flight caps, enforced where PROPOSED leases are written, in the one statement that writes
 * them ({@code kvreuse_propose_leases}, migration V81): it takes a transaction-level advisory lock
 * per donor and per target of the group (in key order, so writers never deadlock), counts the live
 * leases of each in PostgreSQL once the locks are held — every replica's, since the locks are
 * PostgreSQL's — and admits the group's proposals in order, each counting the ones admitted before
 * it. Selection's in-memory counts ({@code InflightLeases}) only spare the store selections that
 * would certainly be refused.
 *
 * <p>One statement in autocommit, not a transaction of several: the proposal write is on the
 * router's hot path, and the locks are held only while PostgreSQL works, never across a round trip.
 */
final class InflightCaps {

    /** Advisory lock class of in-flight counting ("kvif"); the two-key lock space is apart from the sweepers'. */
    static final int LOCK_CLASS = 0x6b76_6966;

    /** One proposal's parties. */
    record Parties(UUID donor, UUID target) {}

    private InflightCaps() {}

    /**
     * Locks every party of the group, counts their live leases (each count stopping at its cap, so
     * work is bounded by parties × cap), and inserts the proposals of {@code plansJson} (one object
     * per {@link LeaseProposals.Proposal}, in the order of {@code group}) that fit: per proposal,
     * whether it was admitted.
     */
    static Mono<boolean[]> proposeWithinCaps(
            DatabaseClient db, String plansJson, List<Parties> group, Instant now, int maxPerDonor, int maxPerTarget) {
        return db.sql("SELECT kvreuse_propose_leases(CAST(:plans AS JSONB), :cls, CAST(:keys AS INTEGER[]),"
                        + " :donorCap, :targetCap, :now) AS admitted")
                .bind("plans", plansJson)
                .bind("cls", LOCK_CLASS)
                .bind("keys", lockKeys(group))
                .bind("donorCap", maxPerDonor)
                .bind("targetCap", maxPerTarget)
                .bind("now", now.atOffset(ZoneOffset.UTC))
                .map((r, m) -> r.get("admitted", Boolean[].class))
                .one()
                .map(admitted -> {
                    if (admitted.length != group.size()) {
                        throw new IllegalStateException(
                                "the store answered " + admitted.length + " admissions for " + group.size());
                    }
                    boolean[] answers = new boolean[admitted.length];
                    for (int i = 0; i < answers.length; i++) {
                        answers[i] = Boolean.TRUE.equals(admitted[i]);
                    }
                    return answers;
                });
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
