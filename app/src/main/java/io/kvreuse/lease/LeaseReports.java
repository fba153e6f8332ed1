package io.kvreuse.lease;

import io.kvreuse.error.ItemResult;
import io.kvreuse.error.KvReuseException;
import io.kvreuse.incarnation.Incarnations;
import io.kvreuse.region.DestinationRegions;
import io.kvreuse.security.ApiPrincipal;
import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.stream.Collectors;
import org.springframework.dao.DataIntegrityViolationException;
import org.springframework.stereotype.Service;
import org.springframework.transaction.reactive.TransactionalOperator;
import reactor.core.publisher.Mono;

/**
 * The target engine's reports (destination, commit, abort) and quiescence evidence, each one
 * transaction with the lease row locked. Another engine's lease answers 404; a stale reporter
 * epoch 409 {@code stale-epoch}; a lease made under epochs that are no longer current 409 {@code
 * lease-fenced}.
 */
@Service
class LeaseReports {

    private final LeaseStore leases;
    private final HoldStore holds;
    private final LeaseLedger ledger;
    private final Leases views;
    private final PartyChecks parties;
    private final LeaseMetrics metrics;
    private final TransactionalOperator tx;
    private final LeaseBatches batches;
    private final Incarnations incarnations;
    private final DestinationRegions regions;
    private final LeaseAggregates aggregates;
    private final LeaseWriter writer;
    private final Clock clock;

    LeaseReports(
            LeaseStore leases,
            HoldStore holds,
            LeaseLedger ledger,
            Leases views,
            PartyChecks parties,
            LeaseMetrics metrics,
            TransactionalOperator tx,
            LeaseBatches batches,
            Incarnations incarnations,
            DestinationRegions regions,
            LeaseAggregates aggregates,
            LeaseWriter writer,
            Clock clock) {
        this.regions = regions;
        this.aggregates = aggregates;
        this.writer = writer;
        this.clock = clock;
        this.leases = leases;
        this.holds = holds;
        this.ledger = ledger;
        this.views = views;
        this.parties = parties;
        this.metrics = metrics;
        this.tx = tx;
        this.batches = batches;
        this.incarnations = incarnations;
    }

    /**
     * Destinations of many leases of one target incarnation, in order, as if each were sent alone
     * with the batch's epoch: allocations on fresh leases in one transaction, every other item
     * (and all of them, should one allocation overlap a held slot range) one by one after it.
     */
    Mono<List<ItemResult<LeaseReportResult>>> destinations(
            UUID targetId, LeaseRequests.DestinationsRequest req, ApiPrincipal p) {
        List<LeaseBatches.DestinationItem> items = req.destinations().stream()
                .map(d -> new LeaseBatches.DestinationItem(d.leaseId(), d.ranks()))
                .toList();
        return batch(
                targetId,
                req.fencingEpoch(),
                p,
                items.stream().map(LeaseBatches.DestinationItem::leaseId).toList(),
                batches.destinations(targetId, items, p.actor()),
                i -> destination(
                        items.get(i).leaseId(),
                        new LeaseRequests.DestinationRequest(
                                req.fencingEpoch(), items.get(i).ranks()),
                        p));
    }

    /** Commits of many leases of one target incarnation, in order, as if each were sent alone. */
    Mono<List<ItemResult<LeaseReportResult>>> commits(UUID targetId, LeaseRequests.CommitsRequest req, ApiPrincipal p) {
        List<LeaseBatches.CommitItem> items = req.commits().stream()
                .map(c -> new LeaseBatches.CommitItem(c.leaseId(), c.committedBlocks()))
                .toList();
        return batch(
                targetId,
                req.fencingEpoch(),
                p,
                items.stream().map(LeaseBatches.CommitItem::leaseId).toList(),
                batches.commits(targetId, items, p.actor()),
                i -> commit(
                        items.get(i).leaseId(),
                        new LeaseRequests.CommitRequest(
                                req.fencingEpoch(), items.get(i).committedBlocks()),
                        p));
    }

    private Mono<List<ItemResult<LeaseReportResult>>> batch(
            UUID targetId,
            long epoch,
            ApiPrincipal p,
            List<UUID> leaseIds,
            Mono<LeaseBatches.Decided<LeaseState>> fast,
            java.util.function.IntFunction<Mono<LeaseView>> alone) {
        return incarnations.requireOwnership(targetId, p).flatMap(inc -> {
            if (inc.fencingEpoch() != epoch) {
                metrics.stale("incarnation");
                return Mono.error(LeaseProblems.staleEpoch("incarnation " + targetId, epoch, inc.fencingEpoch()));
            }
            int size = leaseIds.size();
            return fast.as(tx::transactional)
                    .doOnNext(batches::committed)
                    .map(LeaseBatches.Decided::results)
                    // an overlapping allocation fails the batch's statement: every item goes alone
                    .onErrorResume(
                            DataIntegrityViolationException.class,
                            e -> Mono.just(java.util.Collections.nCopies(size, null)))
                    .flatMap(results -> reactor.core.publisher.Flux.range(0, size)
                            .concatMap(i -> {
                                LeaseState state = results.get(i);
                                return state != null
                                        ? Mono.just(ItemResult.ok(new LeaseReportResult(leaseIds.get(i), state)))
                                        : targetOf(leaseIds.get(i), targetId)
                                                .then(alone.apply(i))
                                                .map(v -> ItemResult.ok(new LeaseReportResult(v.leaseId(), v.state())))
                                                .onErrorResume(
                                                        KvReuseException.class,
                                                        e -> Mono.just(ItemResult.<LeaseReportResult>failed(e)));
                            })
                            .collectList());
        });
    }

    Mono<LeaseView> destination(UUID id, LeaseRequests.DestinationRequest req, ApiPrincipal p) {
        return locked(
                        id,
                        lease -> parties.target(lease, p, req.fencingEpoch())
                                .flatMap(target -> leases.tp(lease.domainId()).flatMap(tp -> {
                                    validate(req, tp, lease.fetchBlocks());
                                    if (lease.state() != LeaseState.PROPOSED
                                            && lease.state() != LeaseState.SOURCE_PINNED) {
                                        return Mono.error(LeaseProblems.wrongState(id, lease.state(), "a destination"));
                                    }
                                    return regions.registry(lease.targetId())
                                            .doOnNext(registry -> checkRegions(id, registry, req))
                                            .then(parties.current(lease))
                                            .then(holds.destinations(id).collectList())
                                            .flatMap(existing -> existing.isEmpty()
                                                    ? allocate(lease, req, p.actor())
                                                            .then(ledger.orderWhenReady(lease, tp))
                                                    : same(existing, req)
                                                            ? Mono.empty()
                                                            : Mono.error(LeaseProblems.destinationDiffers(id)));
                                })))
                .onErrorMap(DataIntegrityViolationException.class, e -> LeaseProblems.destinationOverlap(id));
    }

    private Mono<Void> allocate(LeaseRow lease, LeaseRequests.DestinationRequest req, String actor) {
        return reactor.core.publisher.Flux.fromIterable(req.ranks())
                .concatMap(r -> holds.insertDestination(
                        lease.leaseId(),
                        r.rank(),
                        lease.targetId(),
                        r.regionRef(),
                        SlotRuns.of(r.slots()),
                        ledger.now()))
                .then(ledger.auditAction(
                        lease,
                        actor,
                        "DESTINATION_ALLOCATED",
                        null,
                        Map.of("ranks", req.ranks().size())));
    }

    private static void validate(LeaseRequests.DestinationRequest req, int tp, int blocks) {
        Set<Integer> ranks =
                req.ranks().stream().map(LeaseRequests.RankDestination::rank).collect(Collectors.toSet());
        if (ranks.size() != req.ranks().size()
                || ranks.size() != tp
                || !ranks.stream().allMatch(r -> r < tp)) {
            throw LeaseProblems.invalid("a destination has exactly one entry per rank 0.." + (tp - 1));
        }
        for (LeaseRequests.RankDestination r : req.ranks()) {
            String problem = SlotRuns.problem(SlotRuns.of(r.slots()), blocks);
            if (problem != null) {
                throw LeaseProblems.invalid("rank " + r.rank() + ": " + problem);
            }
        }
    }

    /** Every rank's region must be one the target registered for that rank, and hold the slot runs (422). */
    private static void checkRegions(
            UUID leaseId, DestinationRegions.Registry registry, LeaseRequests.DestinationRequest req) {
        for (LeaseRequests.RankDestination r : req.ranks()) {
            String problem = registry.problem(r.rank(), r.regionRef(), SlotRuns.of(r.slots()));
            if (problem != null) {
                throw DestinationRegions.notRegistered(leaseId, problem);
            }
        }
    }

    private static boolean same(List<HoldStore.Destination> existing, LeaseRequests.DestinationRequest req) {
        Map<Integer, LeaseRequests.RankDestination> byRank =
                req.ranks().stream().collect(Collectors.toMap(LeaseRequests.RankDestination::rank, r -> r));
        return existing.size() == req.ranks().size()
                && existing.stream().allMatch(d -> {
                    LeaseRequests.RankDestination r = byRank.get(d.rank());
                    return r != null
                            && r.regionRef().equals(d.regionRef())
                            && SlotRuns.json(SlotRuns.of(r.slots())).equals(SlotRuns.json(d.runs()));
                });
    }

    /**
     * A batch addressed to one target incarnation reports only on that incarnation's leases: a lease
     * of another incarnation, even one the same engine owns, is answered as unknown (404).
     */
    private Mono<Void> targetOf(UUID leaseId, UUID targetId) {
        return leases.find(leaseId)
                .filter(l -> l.targetId().equals(targetId))
                .switchIfEmpty(Mono.error(() -> LeaseProblems.noSuchLease(leaseId)))
                .then();
    }

    Mono<LeaseView> commit(UUID id, LeaseRequests.CommitRequest req, ApiPrincipal p) {
        return decided(
                id,
                lease -> parties.target(lease, p, req.fencingEpoch()),
                new LeaseReport.Commit(req.committedBlocks()),
                p.actor());
    }

    /** The target gives up (or an operator forces it): released at once unless a transfer may be writing. */
    Mono<LeaseView> abort(UUID id, LeaseRequests.AbortRequest req, ApiPrincipal p) {
        String reason = req.reason() == null || req.reason().isBlank()
                ? "aborted"
                : req.reason().strip();
        return decided(
                id, lease -> parties.target(lease, p, req.fencingEpoch()), new LeaseReport.Abort(reason), p.actor());
    }

    /**
     * Quiescence evidence for one side, from an engine for the side it owns (checked by {@link
     * PartyChecks}), a participating agent or an operator; what it does is the decider's.
     */
    Mono<LeaseView> quiesced(UUID id, LeaseRequests.QuiescedRequest req, ApiPrincipal p) {
        boolean source = req.side() == LeaseRequests.Side.SOURCE;
        LeaseReport.Witness witness = switch (p.role()) {
            case AGENT -> LeaseReport.Witness.AGENT;
            case OPERATOR -> LeaseReport.Witness.OPERATOR;
            case ENGINE, ROUTER -> LeaseReport.Witness.ENGINE;
        };
        return decided(
                id,
                lease -> parties.quiescenceWitness(lease, source, p, req.fencingEpoch()),
                new LeaseReport.Quiesced(source, witness, req.evidence()),
                p.actor());
    }

    /**
     * One report through the decider and the writer, as a batch of one: the lease locked and read,
     * the caller checked, the decision written, and the lease answered as the transaction left it.
     * A refusal changes nothing; a problem that comes with changes is answered once they committed.
     */
    private Mono<LeaseView> decided(
            UUID id, java.util.function.Function<LeaseRow, Mono<?>> check, LeaseReport report, String actor) {
        Instant now = clock.instant();
        List<LeaseDecision> written = new java.util.ArrayList<>(1);
        return aggregates
                .lock(List.of(id))
                .flatMap(found -> Mono.justOrEmpty(found.get(id)))
                .switchIfEmpty(Mono.error(() -> LeaseProblems.noSuchLease(id)))
                .flatMap(lease -> check.apply(lease.row())
                        .then(Mono.fromSupplier(() -> LeaseDecider.decide(lease, report, actor, now))))
                .flatMap(d -> {
                    if (d.problem() != null && d.changes().isEmpty()) {
                        writer.published(List.of(d));
                        return Mono.error(d.problem());
                    }
                    written.add(d);
                    return writer.write(written, now);
                })
                .then(Mono.defer(() -> views.view(id)))
                .as(tx::transactional)
                .flatMap(view -> {
                    writer.published(written);
                    KvReuseException after =
                            written.isEmpty() ? null : written.getFirst().problem();
                    return after == null ? Mono.just(view) : Mono.error(after);
                });
    }

    /**
     * Runs {@code action} on the locked lease and answers with the lease as the same transaction
     * left it (read on its connection, before the commit releases the lock).
     */
    private Mono<LeaseView> locked(UUID id, java.util.function.Function<LeaseRow, Mono<Void>> action) {
        return leases.lock(id)
                .switchIfEmpty(Mono.error(() -> LeaseProblems.noSuchLease(id)))
                .flatMap(action)
                .then(Mono.defer(() -> views.view(id)))
                .as(tx::transactional);
    }
}
