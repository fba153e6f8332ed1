package io.kvreuse.lease;

import io.kvreuse.error.ItemResult;
import io.kvreuse.error.KvReuseException;
import io.kvreuse.incarnation.Incarnations;
import io.kvreuse.region.DestinationRegions;
import io.kvreuse.security.ApiPrincipal;
import io.kvreuse.security.Role;
import java.util.List;
import java.util.Map;
import java.util.Objects;
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
    private final CommandStore commands;
    private final LeaseLedger ledger;
    private final Leases views;
    private final PartyChecks parties;
    private final LeaseMetrics metrics;
    private final TransactionalOperator tx;
    private final LeaseBatches batches;
    private final Incarnations incarnations;
    private final OrderWriter orders;
    private final DestinationRegions regions;

    LeaseReports(
            LeaseStore leases,
            HoldStore holds,
            CommandStore commands,
            LeaseLedger ledger,
            Leases views,
            PartyChecks parties,
            LeaseMetrics metrics,
            TransactionalOperator tx,
            LeaseBatches batches,
            Incarnations incarnations,
            OrderWriter orders,
            DestinationRegions regions) {
        this.regions = regions;
        this.leases = leases;
        this.holds = holds;
        this.commands = commands;
        this.ledger = ledger;
        this.views = views;
        this.parties = parties;
        this.metrics = metrics;
        this.tx = tx;
        this.batches = batches;
        this.incarnations = incarnations;
        this.orders = orders;
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
        return locked(
                id,
                lease -> parties.target(lease, p, req.fencingEpoch()).flatMap(target -> {
                    if (req.committedBlocks() > lease.fetchBlocks()) {
                        return Mono.error(LeaseProblems.invalid("committedBlocks " + req.committedBlocks()
                                + " exceeds the " + lease.fetchBlocks() + " fetched"));
                    }
                    if ("COMMITTED".equals(lease.outcome())
                            && Objects.equals(lease.committedBlocks(), req.committedBlocks())) {
                        return Mono.empty();
                    }
                    if (lease.state() != LeaseState.DELIVERED) {
                        return Mono.error(LeaseProblems.wrongState(id, lease.state(), "a commit"));
                    }
                    if (target.epoch() != lease.targetEpoch()) {
                        metrics.stale("lease");
                        return Mono.error(LeaseProblems.leaseFenced(id, "target", lease.targetEpoch(), target.epoch()));
                    }
                    return leases.committed(id, req.committedBlocks())
                            .then(commands.settle(id, "DELIVERED", "committed", ledger.now()))
                            .then(ledger.move(lease, LeaseState.COMMITTED, p.actor(), "COMMITTED", null))
                            .flatMap(c -> ledger.release(c, p.actor(), "COMMITTED", null))
                            .doOnSuccess(r -> metrics.committed(req.committedBlocks()))
                            .then();
                }));
    }

    /** The target gives up (or an operator forces it): released at once unless a transfer may be writing. */
    Mono<LeaseView> abort(UUID id, LeaseRequests.AbortRequest req, ApiPrincipal p) {
        String reason = req.reason() == null || req.reason().isBlank()
                ? "aborted"
                : req.reason().strip();
        return locked(
                id,
                lease -> parties.target(lease, p, req.fencingEpoch()).flatMap(target -> switch (lease.state()) {
                    case PROPOSED, SOURCE_PINNED, DELIVERED ->
                        ledger.move(lease, LeaseState.FAILED, p.actor(), "ABORTED", reason)
                                .flatMap(f -> ledger.release(f, p.actor(), "ABORTED", null))
                                .then();
                    case TRANSFERRING ->
                        ledger.move(lease, LeaseState.UNCERTAIN, p.actor(), "ABORTED", reason)
                                .then();
                    default -> Mono.<Void>empty();
                }));
    }

    /**
     * Quiescence evidence for one side; with both sides quiesced a maybe-writing lease fails and
     * releases. An engine speaks only for the side it owns (checked by {@link PartyChecks}) and
     * never over the agent: while a part of the lease's transfer order is not final (queued,
     * running or uncertain), the agent may still be writing, so engine evidence of both sides makes
     * a transferring lease UNCERTAIN and keeps everything held (DESIGN §3); the agent's final part
     * reports or an operator end it.
     */
    Mono<LeaseView> quiesced(UUID id, LeaseRequests.QuiescedRequest req, ApiPrincipal p) {
        boolean source = req.side() == LeaseRequests.Side.SOURCE;
        return locked(
                id,
                lease -> parties.quiescenceWitness(lease, source, p, req.fencingEpoch())
                        .then(leases.quiesced(id, source, !source))
                        .then(ledger.auditAction(
                                lease,
                                p.actor(),
                                "QUIESCED",
                                req.evidence(),
                                Map.of("side", req.side().name())))
                        .then(Mono.defer(() -> {
                            boolean both =
                                    (lease.sourceQuiesced() || source) && (lease.destinationQuiesced() || !source);
                            if (!both || !lease.state().mayBeWriting()) {
                                return Mono.<Void>empty();
                            }
                            if (p.role() != Role.ENGINE) {
                                return quiescedRelease(lease, p);
                            }
                            return agentPartsOpen(id).flatMap(open -> {
                                if (!open) {
                                    return quiescedRelease(lease, p);
                                }
                                if (lease.state() != LeaseState.TRANSFERRING) {
                                    return Mono.<Void>empty();
                                }
                                return ledger.move(
                                                lease,
                                                LeaseState.UNCERTAIN,
                                                p.actor(),
                                                null,
                                                "engines declared quiescence while the agent's transfer part is not final")
                                        .then(orders.state(id, "UNCERTAIN"));
                            });
                        })));
    }

    /** Whether a part of the lease's transfer order is not final: the agent may still be writing. */
    private Mono<Boolean> agentPartsOpen(UUID id) {
        return orders.parts(id).any(part -> !AGENT_FINAL.contains(part.state()));
    }

    private static final Set<String> AGENT_FINAL = Set.of("DONE", "FAILED", "QUIESCED");

    private Mono<Void> quiescedRelease(LeaseRow lease, ApiPrincipal p) {
        return ledger.move(lease, LeaseState.FAILED, p.actor(), null, "transfer quiesced on both sides")
                .flatMap(f -> ledger.release(f, p.actor(), f.outcome() == null ? "FAILED" : f.outcome(), null))
                .then();
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
