package io.kvreuse.lease;

import io.kvreuse.incarnation.IncarnationState;
import io.kvreuse.incarnation.Incarnations;
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
 * LeaseDecider} says what a deadline does), and all their changes written at once. A LOST
 * incarnation still party to unfinished leases moves to RECLAIM_PENDING. A lease whose router was
 * answered NO_HINT before the lease was written ({@link ProposalAbandoned}) is withdrawn at once (those
 * abandoned while a withdrawal runs go together in the next one, in one transaction):
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
    private final Clock clock;

    LeaseSweeper(
            DatabaseClient db,
            TransactionalOperator tx,
            ReportGroups groups,
            LeaseWriter writer,
            Incarnations incarnations,
            EngineCommands.LeaseProperties props,
            Clock clock) {
        this.db = db;
        this.tx = tx;
        this.groups = groups;
        this.writer = writer;
        this.incarnations = incarnations;
        this.props = props;
        this.clock = clock;
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
            List<UUID> reclaim = new ArrayList<>();
            Mono<Boolean> sweep = tryLock()
                    .flatMap(locked -> !locked
                            ? Mono.just(false)
                            : ids(db.sql(DUE).bind("now", LeaseRow.at(now)))
                                    .flatMap(due -> groups.decideAll(due, new LeaseReport.Tick(now), ACTOR))
                                    .doOnNext(all -> all.stream()
                                            .filter(d -> !d.changes().isEmpty())
                                            .forEach(decided::add))
                                    .then(ids(db.sql(LOST_PARTIES))
                                            .flatMapMany(Flux::fromIterable)
                                            .concatMap(this::reclaimPending)
                                            .doOnNext(reclaim::add)
                                            .then())
                                    .thenReturn(true));
            return sweep.as(tx::transactional).map(ran -> {
                writer.published(decided);
                List<UUID> moved =
                        decided.stream().map(d -> d.after().row().leaseId()).toList();
                return new SweepResult(ran, moved, List.copyOf(reclaim));
            });
        });
    }

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
        return Flux.fromIterable(byReason.entrySet())
                .concatMap(e -> groups.decideAll(e.getValue(), new LeaseReport.Withdrawn(e.getKey()), SELECTION))
                .collectList()
                .as(tx::transactional)
                .doOnNext(all -> all.forEach(writer::published))
                .thenReturn(java.util.Collections.nCopies(group.size(), Boolean.TRUE));
    }

    private Mono<Boolean> tryLock() {
        return db.sql("SELECT pg_try_advisory_xact_lock(:key) AS locked")
                .bind("key", LOCK_KEY)
                .map((r, m) -> Boolean.TRUE.equals(r.get("locked", Boolean.class)))
                .one();
    }

    private static final String DUE = """
            SELECT lease_id AS id FROM (
                (SELECT lease_id FROM lease WHERE state = 'PROPOSED' AND ttl_deadline < :now
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
    private Mono<List<UUID>> ids(DatabaseClient.GenericExecuteSpec query) {
        return query.bind("batch", props.sweepBatch())
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
