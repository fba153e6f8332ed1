package io.kvreuse.lease;

import io.kvreuse.audit.AuditTrail;
import io.kvreuse.incarnation.IncarnationState;
import io.kvreuse.incarnation.Incarnations;
import io.kvreuse.store.GroupCommit;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Collectors;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.context.event.EventListener;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;
import org.springframework.transaction.reactive.TransactionalOperator;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Lease deadlines, as of the injected clock, on one replica at a time (a transaction-level advisory
 * lock; every move is also conditional under the lease's row lock, so overlapping sweeps are
 * harmless): the due leases are locked and read together, each decided on a tick ({@link
 * LeaseDecider} says what a deadline does), and all their changes written at once. PROPOSED leases
 * past their TTL that hold nothing (no rank pinned, no destination) are the bulk of them under
 * selection load and need no decision: one statement per pass ends them all as the decider would
 * (EXPIRED, PIN commands withdrawn, in-flight counters, audit), without reading their aggregates. A LOST
 * incarnation still party to unfinished leases moves to RECLAIM_PENDING. A lease whose router was
 * answered NO_HINT before the lease was written ({@link ProposalAbandoned}) is withdrawn at once (those
 * abandoned while a withdrawal runs go together in the next one, in one transaction; an untouched one
 * by the same statement as an expiry):
 * nobody will fetch it, so the donor's pins are let go now rather than at the transfer deadline; a
 * lease that got further (a destination arrived, a transfer was ordered) is left to its course.
 */
@Component
public class LeaseSweeper {

    /** The advisory lock key of the lease sweeper ("kvrlease"). */
    static final long LOCK_KEY = 0x6b76726c65617365L;

    static final String ACTOR = "system:lease-sweeper";
    static final String SELECTION = "system:selection";
    private static final Log log = LogFactory.getLog(LeaseSweeper.class);

    /** One withdrawal group in flight; those abandoned meanwhile wait and go together. */
    private final GroupCommit<ProposalAbandoned, Boolean> withdrawals = new GroupCommit<>(1, 1024, this::withdraw);

    private final DatabaseClient db;
    private final TransactionalOperator tx;
    private final ReportGroups groups;
    private final LeaseWriter writer;
    private final Incarnations incarnations;
    private final EngineCommands.LeaseProperties props;
    private final LeaseMetrics metrics;
    private final Clock clock;
    private final AuditTrail audit;

    LeaseSweeper(
            DatabaseClient db,
            TransactionalOperator tx,
            ReportGroups groups,
            LeaseWriter writer,
            Incarnations incarnations,
            EngineCommands.LeaseProperties props,
            LeaseMetrics metrics,
            Clock clock,
            AuditTrail audit) {
        this.db = db;
        this.tx = tx;
        this.groups = groups;
        this.writer = writer;
        this.incarnations = incarnations;
        this.props = props;
        this.metrics = metrics;
        this.clock = clock;
        this.audit = audit;
    }

    /** What one sweep did: whether it held the lock, the leases it moved, incarnations sent to RECLAIM_PENDING. */
    public record SweepResult(boolean ran, List<UUID> leasesMoved, List<UUID> reclaimPending) {}

    @Scheduled(
            fixedDelayString = "${kvreuse.leases.sweep-interval:500ms}",
            initialDelayString = "${kvreuse.leases.sweep-interval:500ms}")
    void scheduledSweep() {
        sweepUntilDrained().subscribe(null, e -> log.warn("lease sweep failed; retrying next interval: " + e));
    }

    /** Most back-to-back passes of one scheduled sweep, so a flood of due leases cannot starve the others. */
    static final int MAX_PASSES = 20;

    /**
     * Sweeps, and again at once while a pass moved a full batch (at most {@link #MAX_PASSES}): more
     * are due, and a sweep interval per batch would let expiry fall behind the proposals; each pass
     * is its own bounded transaction. Answers each pass's result.
     */
    Flux<SweepResult> sweepUntilDrained() {
        return sweepOnce()
                .expand(r -> r.ran() && r.leasesMoved().size() >= props.sweepBatch() ? sweepOnce() : Mono.empty())
                .take(MAX_PASSES);
    }

    public Mono<SweepResult> sweepOnce() {
        return Mono.defer(() -> {
            Instant now = clock.instant();
            List<LeaseDecision> decided = new ArrayList<>();
            List<UUID> expired = new ArrayList<>();
            List<UUID> reclaim = new ArrayList<>();
            Mono<Boolean> sweep = tryLock()
                    .flatMap(locked -> !locked
                            ? Mono.just(false)
                            // the decider's leases first: they are locked in id order, waiting, like every
                            // lease writer's; the untouched ones after, without waiting (SKIP LOCKED), so a
                            // sweep never waits while holding locks taken out of that order
                            : ids(db.sql(DUE).bind("now", LeaseRow.at(now)), props.sweepBatch())
                                    .flatMap(due -> groups.decideAll(due, new LeaseReport.Tick(now), ACTOR)
                                            .doOnNext(all -> all.stream()
                                                    .filter(d -> !d.changes().isEmpty())
                                                    .forEach(decided::add))
                                            // the pass's batch bounds both: the rest waits for the next pass
                                            .thenReturn(props.sweepBatch() - due.size()))
                                    .flatMap(left -> left <= 0
                                            ? Mono.just(List.<UUID>of())
                                            : ids(db.sql(DUE_PROPOSED).bind("now", LeaseRow.at(now)), left))
                                    .flatMap(due -> expireUntouched(due, now, ACTOR, TTL_PASSED, true))
                                    .doOnNext(expired::addAll)
                                    .then(ids(db.sql(LOST_PARTIES), props.sweepBatch())
                                            .flatMapMany(Flux::fromIterable)
                                            .concatMap(this::reclaimPending)
                                            .doOnNext(reclaim::add)
                                            .then())
                                    .thenReturn(true));
            return sweep.as(tx::transactional).map(ran -> {
                writer.published(decided);
                expired.forEach(id -> metrics.transition(LeaseState.EXPIRED));
                List<UUID> moved = new ArrayList<>(expired);
                decided.stream().map(d -> d.after().row().leaseId()).forEach(moved::add);
                return new SweepResult(ran, List.copyOf(moved), List.copyOf(reclaim));
            });
        });
    }

    /** The reason of an expiry on the TTL, as the decider words it. */
    private static final String TTL_PASSED = "lease TTL passed";

    /**
     * The PROPOSED leases past their TTL, oldest first, locked; one locked by a writer now is left to
     * the next pass. {@link #DUE} takes only those that hold something (the decider's).
     */
    private static final String DUE_PROPOSED = """
            SELECT lease_id AS id FROM lease WHERE state = 'PROPOSED' AND ttl_deadline < :now
            ORDER BY ttl_deadline LIMIT :batch FOR UPDATE SKIP LOCKED
            """;

    /**
     * Ends, in one statement, the leases of {@code :ids} that are still PROPOSED and hold nothing (no
     * pin and no destination that is not released): what the decider does to each of them on its TTL
     * ({@code LeaseMove.PROPOSAL_EXPIRED}) or on a withdrawal ({@code PROPOSAL_WITHDRAWN}): the row
     * moves to EXPIRED with outcome EXPIRED, its open PIN and DELIVERED commands are withdrawn, its
     * parties' in-flight counters count it as ended. Answers the ids it moved with their new versions; the
     * caller audits the moves through the audit trail.
     * Run it after the rows are locked, in a later statement, so its snapshot sees every pin and
     * destination committed before the locks were granted.
     */
    private static final String EXPIRE_UNTOUCHED = """
            WITH expired AS (
                UPDATE lease l SET state = 'EXPIRED', outcome = 'EXPIRED', reason = :reason, version = l.version + 1,
                    state_changed_at = :now
                WHERE l.lease_id = ANY(CAST(:ids AS UUID[])) AND l.state = 'PROPOSED'
                  AND (NOT :ttl_only OR l.ttl_deadline < :now)
                  AND NOT EXISTS (SELECT 1 FROM lease_source_pin p WHERE p.lease_id = l.lease_id AND p.state <> 'RELEASED')
                  AND NOT EXISTS (SELECT 1 FROM lease_destination d WHERE d.lease_id = l.lease_id AND d.state <> 'RELEASED')
                RETURNING l.lease_id, l.donor_incarnation_id AS d, l.target_incarnation_id AS t, l.version),
            withdrawn AS (
                UPDATE engine_command c SET acked_at = :now, ok = FALSE, detail = 'withdrawn'
                WHERE c.lease_id = ANY(ARRAY(SELECT lease_id FROM expired)) AND c.type IN ('PIN', 'DELIVERED')
                  AND c.acked_at IS NULL),
            ended AS (
                INSERT INTO lease_inflight_end (incarnation_id, side, shard, ended)
                SELECT x.p, x.s, :end_shard, count(*)
                FROM (SELECT d AS p, 'D' AS s FROM expired UNION ALL SELECT t, 'T' FROM expired) AS x
                GROUP BY x.p, x.s ORDER BY x.p, x.s
                ON CONFLICT (incarnation_id, side, shard) DO UPDATE SET ended = lease_inflight_end.ended + EXCLUDED.ended)
            SELECT lease_id AS id, version FROM expired ORDER BY lease_id
            """;

    /**
     * A PROPOSED lease holds nothing: ending it needs neither its aggregate nor the decider, so the
     * sweep ends every untouched one of {@code locked} (rows this transaction locked) in one
     * statement; the rest (a lease a rank pinned, or one that moved on) is left to the decider.
     */
    private Mono<List<UUID>> expireUntouched(
            List<UUID> locked, Instant now, String actor, String reason, boolean ttlOnly) {
        if (locked.isEmpty()) {
            return Mono.just(List.of());
        }
        return db.sql(EXPIRE_UNTOUCHED)
                .bind("ids", LeaseAggregates.ids(locked))
                .bind("now", LeaseRow.at(now))
                .bind("reason", reason)
                .bind("ttl_only", ttlOnly)
                .bind(
                        "end_shard",
                        java.util.concurrent.ThreadLocalRandom.current().nextInt(LeaseWriter.END_SHARDS))
                .map((r, m) -> new AuditTrail.Row(
                        actor,
                        "lease",
                        String.valueOf(r.get("id", UUID.class)),
                        "TRANSITION",
                        LeaseState.PROPOSED.name(),
                        LeaseState.EXPIRED.name(),
                        r.get("version", Long.class),
                        reason,
                        EXPIRED_DETAIL))
                .all()
                .collectList()
                .flatMap(moved -> audit.recordAll(moved)
                        .thenReturn(moved.stream()
                                .map(row -> UUID.fromString(row.subjectId()))
                                .toList()));
    }

    /** The detail of an untouched lease's expiry in the audit trail, as the decider writes it. */
    private static final String EXPIRED_DETAIL = "{\"outcome\":\"" + LeaseOutcome.EXPIRED + "\"}";

    @EventListener
    void on(ProposalAbandoned abandoned) {
        withdrawals
                .submit(abandoned)
                .subscribe(
                        null,
                        e -> log.warn("abandoned lease " + abandoned.leaseId()
                                + " not withdrawn; its deadlines will end it: " + e));
    }

    /**
     * Withdraws a group of abandoned proposals in one transaction (one decision per reason). Under
     * overload many selections answer DEADLINE after their lease was written; a transaction each
     * would add work exactly when the store is behind, and make more selections miss their deadline.
     */
    private Mono<List<Boolean>> withdraw(List<ProposalAbandoned> group) {
        Map<String, List<UUID>> byReason = group.stream()
                .collect(Collectors.groupingBy(
                        ProposalAbandoned::reason,
                        LinkedHashMap::new,
                        Collectors.mapping(ProposalAbandoned::leaseId, Collectors.toList())));
        Instant now = clock.instant();
        List<UUID> expired = new ArrayList<>();
        return Flux.fromIterable(byReason.entrySet())
                .concatMap(e -> db.sql(LOCK_BY_IDS)
                        .bind("ids", LeaseAggregates.ids(e.getValue()))
                        .map((r, m) -> r.get("id", UUID.class))
                        .all()
                        .collectList()
                        .flatMap(locked -> expireUntouched(locked, now, SELECTION, e.getKey(), false))
                        .flatMap(done -> {
                            expired.addAll(done);
                            List<UUID> rest = e.getValue().stream()
                                    .filter(id -> !done.contains(id))
                                    .toList();
                            return rest.isEmpty()
                                    ? Mono.just(List.<LeaseDecision>of())
                                    : groups.decideAll(rest, new LeaseReport.Withdrawn(e.getKey()), SELECTION);
                        }))
                .collectList()
                .as(tx::transactional)
                .doOnNext(all -> {
                    all.forEach(writer::published);
                    expired.forEach(id -> metrics.transition(LeaseState.EXPIRED));
                })
                .thenReturn(java.util.Collections.nCopies(group.size(), Boolean.TRUE));
    }

    /** Locks the leases of {@code :ids} in id order, the order every lease writer locks them in. */
    private static final String LOCK_BY_IDS = """
            SELECT lease_id AS id FROM lease WHERE lease_id = ANY(CAST(:ids AS UUID[]))
            ORDER BY lease_id FOR UPDATE
            """;

    private Mono<Boolean> tryLock() {
        return db.sql("SELECT pg_try_advisory_xact_lock(:key) AS locked")
                .bind("key", LOCK_KEY)
                .map((r, m) -> Boolean.TRUE.equals(r.get("locked", Boolean.class)))
                .one();
    }

    private static final String DUE = """
            SELECT lease_id AS id FROM (
                (SELECT lease_id FROM lease l WHERE state = 'PROPOSED' AND ttl_deadline < :now
                   AND (EXISTS (SELECT 1 FROM lease_source_pin p WHERE p.lease_id = l.lease_id AND p.state <> 'RELEASED')
                        OR EXISTS (SELECT 1 FROM lease_destination d WHERE d.lease_id = l.lease_id AND d.state <> 'RELEASED'))
                 ORDER BY ttl_deadline LIMIT :batch)
                UNION ALL
                (SELECT lease_id FROM lease WHERE state IN ('SOURCE_PINNED', 'TRANSFERRING') AND transfer_deadline < :now
                 ORDER BY transfer_deadline LIMIT :batch)
                UNION ALL
                (SELECT lease_id FROM lease WHERE state = 'DELIVERED' AND abandon_deadline < :now
                 ORDER BY abandon_deadline LIMIT :batch)) AS due
            ORDER BY lease_id LIMIT :batch
            """;

    private static final String LOST_PARTIES = """
            SELECT DISTINCT i.incarnation_id AS id FROM engine_incarnation i JOIN lease l
              ON i.incarnation_id IN (l.donor_incarnation_id, l.target_incarnation_id)
            WHERE i.state = 'LOST'
              AND l.state IN ('SOURCE_PINNED', 'TRANSFERRING', 'DELIVERED', 'UNCERTAIN', 'RELEASING')
            LIMIT :batch
            """;

    /** The ids a query finds, read to the end before the next statement runs. */
    private Mono<List<UUID>> ids(DatabaseClient.GenericExecuteSpec query, int batch) {
        return query.bind("batch", batch)
                .map((r, m) -> r.get("id", UUID.class))
                .all()
                .collectList();
    }

    private Mono<UUID> reclaimPending(UUID id) {
        return incarnations
                .transition(
                        id,
                        IncarnationState.LOST,
                        IncarnationState.RECLAIM_PENDING,
                        ACTOR,
                        "lost while party to leases that may hold memory")
                .map(c -> id)
                .onErrorResume(io.kvreuse.incarnation.IllegalTransitionException.class, e -> Mono.empty());
    }
}
