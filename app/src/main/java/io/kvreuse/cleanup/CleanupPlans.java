package io.kvreuse.cleanup;

import static io.kvreuse.incarnation.IncarnationState.LOST;
import static io.kvreuse.incarnation.IncarnationState.RECLAIMED;
import static io.kvreuse.incarnation.IncarnationState.RECLAIM_PENDING;

import io.kvreuse.audit.AuditEntry;
import io.kvreuse.audit.AuditTrail;
import io.kvreuse.bank.RetainedBanks;
import io.kvreuse.error.InvalidRequestException;
import io.kvreuse.error.ProblemType;
import io.kvreuse.incarnation.IncarnationState;
import io.kvreuse.incarnation.IncarnationView;
import io.kvreuse.incarnation.Incarnations;
import io.kvreuse.lease.LeaseReclaim;
import io.kvreuse.security.ApiPrincipal;
import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.springframework.stereotype.Service;
import org.springframework.transaction.reactive.TransactionalOperator;
import reactor.core.publisher.Mono;

/**
 * Operator cleanup (DESIGN §1: automatic reclamation after an unclean exit is deliberately
 * unsupported). A plan is a dry run with a fingerprint; executing it — at most once, only while the
 * fingerprint still matches, with a reason, and with the operator's attestation wherever a transfer
 * is not proven quiesced — fences the incarnation (epoch bump: its reports are refused from then
 * on), ends its leases and releases what they hold, drops its banks and marks it RECLAIMED so its
 * stable name is free. One transaction; everything audited with actor and reason.
 */
@Service
public class CleanupPlans {

    private final Incarnations incarnations;
    private final CleanupSnapshot snapshots;
    private final CleanupStore store;
    private final LeaseReclaim leases;
    private final RetainedBanks banks;
    private final AuditTrail audit;
    private final TransactionalOperator tx;
    private final Clock clock;

    CleanupPlans(
            Incarnations incarnations,
            CleanupSnapshot snapshots,
            CleanupStore store,
            LeaseReclaim leases,
            RetainedBanks banks,
            AuditTrail audit,
            TransactionalOperator tx,
            Clock clock) {
        this.incarnations = incarnations;
        this.snapshots = snapshots;
        this.store = store;
        this.leases = leases;
        this.banks = banks;
        this.audit = audit;
        this.tx = tx;
        this.clock = clock;
    }

    /** Incarnations SUSPECT, LOST or RECLAIM_PENDING, and gone owners whose banks are still live. */
    public Mono<List<CleanupRecords.Candidate>> candidates() {
        return store.candidates().collectList();
    }

    /**
     * A dry-run plan for one incarnation; 422 when it is not a cleanup candidate (a live engine is
     * never reclaimed). The new plan supersedes the incarnation's older unexecuted plans, so an
     * operator's retries do not pile up plans and only the latest one can run.
     */
    public Mono<CleanupRecords.Plan> plan(UUID incarnationId, ApiPrincipal operator) {
        Instant now = clock.instant();
        return incarnations
                .find(incarnationId)
                .flatMap(inc -> snapshots.of(inc).flatMap(s -> {
                    if (!CleanupSnapshot.plannable(inc.state(), s)) {
                        return Mono.error(CleanupProblems.notACandidate(incarnationId, inc.state()));
                    }
                    CleanupRecords.Plan plan = new CleanupRecords.Plan(
                            UUID.randomUUID(),
                            incarnationId,
                            inc.stableName(),
                            inc.state().name(),
                            inc.fencingEpoch(),
                            "PLANNED",
                            s.leases(),
                            s.banks(),
                            s.pinnedBlocks(),
                            s.destinationBlocks(),
                            s.blockers(),
                            !s.blockers().isEmpty(),
                            s.fingerprint(),
                            now,
                            operator.actor(),
                            null);
                    return store.supersede(incarnationId, plan.planId())
                            .then(store.insert(plan))
                            .then(audit.record(AuditEntry.action(
                                            operator.actor(),
                                            "cleanup-plan",
                                            plan.planId().toString(),
                                            "CLEANUP_PLANNED")
                                    .withDetail(Map.of(
                                            "incarnationId",
                                            incarnationId.toString(),
                                            "leases",
                                            s.leases().size(),
                                            "banks",
                                            s.banks().size(),
                                            "blockers",
                                            s.blockers().size()))))
                            .as(tx::transactional)
                            .thenReturn(plan);
                }));
    }

    public Mono<CleanupRecords.Plan> find(UUID planId) {
        return store.find(planId).switchIfEmpty(Mono.error(() -> CleanupProblems.noSuchPlan(planId)));
    }

    /** Executes a plan once; 409 when executed before or stale, 422 when attestation is missing. */
    public Mono<CleanupRecords.Outcome> execute(
            UUID planId, String reason, boolean quiescenceAttested, ApiPrincipal operator) {
        if (reason == null || reason.isBlank()) {
            return Mono.error(new InvalidRequestException(ProblemType.INVALID_REQUEST, "a reason is required"));
        }
        String why = reason.strip();
        return store.lock(planId)
                .switchIfEmpty(Mono.error(() -> CleanupProblems.noSuchPlan(planId)))
                .flatMap(plan -> {
                    if (plan.status().equals(CleanupStore.SUPERSEDED)) {
                        return Mono.error(CleanupProblems.superseded(planId));
                    }
                    if (!plan.status().equals("PLANNED")) {
                        return Mono.error(CleanupProblems.executed(planId));
                    }
                    return incarnations
                            .find(plan.incarnationId())
                            .flatMap(inc -> snapshots.of(inc).flatMap(s -> {
                                if (!s.fingerprint().equals(plan.fingerprint())) {
                                    return Mono.error(CleanupProblems.stale(planId));
                                }
                                if (!s.blockers().isEmpty() && !quiescenceAttested) {
                                    return Mono.error(CleanupProblems.attestationRequired(planId, s.blockers()));
                                }
                                return run(plan, inc, why, quiescenceAttested, operator);
                            }));
                })
                .as(tx::transactional);
    }

    private Mono<CleanupRecords.Outcome> run(
            CleanupRecords.Plan plan, IncarnationView inc, String reason, boolean attested, ApiPrincipal operator) {
        String actor = operator.actor();
        return fence(inc, actor, reason)
                .flatMap(epoch -> leases.reclaim(inc.incarnationId(), actor, reason)
                        .flatMap(released -> banks.dropForCleanup(inc.incarnationId(), actor, reason)
                                .map(dropped -> new CleanupRecords.Outcome(
                                        plan.planId(),
                                        inc.incarnationId(),
                                        inc.state().name(),
                                        inc.state().holdsResources()
                                                ? RECLAIMED.name()
                                                : inc.state().name(),
                                        epoch,
                                        released.leases(),
                                        released.pins(),
                                        released.destinations(),
                                        dropped,
                                        reason,
                                        attested,
                                        actor,
                                        clock.instant()))))
                .flatMap(outcome -> store.executed(plan.planId(), outcome)
                        .then(audit.record(AuditEntry.action(
                                        actor, "cleanup-plan", plan.planId().toString(), "CLEANUP_EXECUTED")
                                .withReason(reason)
                                .withDetail(Map.of(
                                        "incarnationId",
                                        inc.incarnationId().toString(),
                                        "quiescenceAttested",
                                        attested,
                                        "leasesEnded",
                                        outcome.leasesEnded(),
                                        "banksDropped",
                                        outcome.banksDropped()))))
                        .thenReturn(outcome));
    }

    /** Moves the incarnation to RECLAIMED (bumping its epoch at every step); returns the final epoch. */
    private Mono<Long> fence(IncarnationView inc, String actor, String reason) {
        IncarnationState s = inc.state();
        if (!s.holdsResources()) {
            return Mono.just(inc.fencingEpoch());
        }
        Mono<IncarnationState> pending = s == LOST || s == RECLAIM_PENDING
                ? Mono.just(s)
                : incarnations
                        .transition(inc.incarnationId(), s, RECLAIM_PENDING, actor, reason)
                        .thenReturn(RECLAIM_PENDING);
        return pending.flatMap(from -> incarnations.transition(inc.incarnationId(), from, RECLAIMED, actor, reason))
                .map(c -> c.fencingEpoch());
    }
}
