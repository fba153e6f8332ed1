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
 * them: its first step ({@code kvreuse_admit_leases}, migrations V81 and V82, which writes nothing)
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

    /** Admits the group under the caps, then inserts what was admitted; answers the admissions. */
    private static final String PROPOSE = """
            WITH input AS (SELECT CAST(:plans AS JSONB) AS plans),
            admission AS MATERIALIZED (
                SELECT kvreuse_admit_leases(plans, :cls, CAST(:keys AS INTEGER[]), :donorCap, :targetCap, :now)
                       AS admitted
                FROM input),
            plan AS (
                SELECT x.* FROM input, admission, ROWS FROM (jsonb_to_recordset(input.plans) AS ("leaseId" UUID,
                    "requestId" TEXT, "domainId" TEXT, "transportClass" TEXT, "donorId" UUID, "donorEpoch" BIGINT,
                    "bankId" UUID, "bankEpoch" BIGINT, "targetId" UUID, "targetEpoch" BIGINT,
                    "localPrefixBlocks" INTEGER, "fetchedHashes" BIGINT[], "slotRuns" INTEGER[], "mmLineage" TEXT,
                    "actionType" TEXT, "transferMs" DOUBLE PRECISION, "recomputeMs" DOUBLE PRECISION,
                    "budgetBytes" BIGINT, "manifestBytes" INTEGER, "ttlDeadline" TIMESTAMPTZ,
                    "transferDeadline" TIMESTAMPTZ, "abandonDeadline" TIMESTAMPTZ)) WITH ORDINALITY AS x
                WHERE admission.admitted[x.ordinality]),
            proposed AS (
                INSERT INTO lease (lease_id, request_id, state, domain_id, donor_incarnation_id, donor_epoch, bank_id,
                    bank_epoch, target_incarnation_id, target_epoch, local_prefix_blocks, fetch_blocks, seq_hashes,
                    transport_class, predicted_transfer_ms, predicted_recompute_ms, budget_bytes, manifest_bytes,
                    ttl_deadline, transfer_deadline, abandon_deadline, source_slot_runs, mm_lineage, action_type)
                SELECT "leaseId", "requestId", 'PROPOSED', "domainId", "donorId", "donorEpoch", "bankId", "bankEpoch",
                    "targetId", "targetEpoch", "localPrefixBlocks", cardinality("fetchedHashes"), "fetchedHashes",
                    "transportClass", "transferMs", "recomputeMs", "budgetBytes", "manifestBytes", "ttlDeadline",
                    "transferDeadline", "abandonDeadline",
                    (SELECT COALESCE(jsonb_agg(jsonb_build_array("slotRuns"[i], "slotRuns"[i + 1]) ORDER BY i), '[]')
                     FROM generate_series(1, cardinality("slotRuns"), 2) AS i),
                    "mmLineage", "actionType"
                FROM plan
                RETURNING lease_id, donor_incarnation_id, created_at),
            pins AS (
                INSERT INTO engine_command (command_id, incarnation_id, lease_id, type, rank, created_at, visible_at)
                SELECT gen_random_uuid(), l.donor_incarnation_id, l.lease_id, 'PIN', r.rank, l.created_at, '-infinity'
                FROM proposed l JOIN incarnation_rank r ON r.incarnation_id = l.donor_incarnation_id),
            counted AS (
                INSERT INTO lease_inflight (incarnation_id, side, admitted)
                SELECT party, side, count(*) FROM (SELECT "donorId" AS party, 'D' AS side FROM plan
                                                   UNION ALL SELECT "targetId", 'T' FROM plan) AS parties
                GROUP BY party, side
                ON CONFLICT (incarnation_id, side) DO UPDATE SET admitted = lease_inflight.admitted + EXCLUDED.admitted)
            SELECT admitted FROM admission
            """;

    /** One proposal's parties. */
    record Parties(UUID donor, UUID target) {}

    private InflightCaps() {}

    /**
     * Locks every party of the group, reads their leases in flight from the counters (work bounded by
     * the group's parties), and inserts the proposals of {@code plansJson} (one object
     * per {@link LeaseProposals.Proposal}, in the order of {@code group}) that fit: per proposal,
     * whether it was admitted.
     */
    static Mono<boolean[]> proposeWithinCaps(
            DatabaseClient db, String plansJson, List<Parties> group, Instant now, int maxPerDonor, int maxPerTarget) {
        return db.sql(PROPOSE)
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
