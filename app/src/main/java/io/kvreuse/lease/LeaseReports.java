package io.kvreuse.lease;

import io.kvreuse.error.ItemResult;
import io.kvreuse.error.KvReuseException;
import io.kvreuse.incarnation.Incarnations;
import io.kvreuse.region.DestinationRegions;
import io.kvreuse.security.ApiPrincipal;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.springframework.dao.DataIntegrityViolationException;
import org.springframework.stereotype.Service;
import org.springframework.transaction.reactive.TransactionalOperator;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The target engine's reports (destination, commit, abort) and quiescence evidence, one or many at
 * a time, each decided by the lease decider and written by the set-based writer: a single report
 * is a batch of one. Another engine's lease answers 404; a stale reporter epoch 409 {@code
 * stale-epoch}; a lease made under epochs that are no longer current 409 {@code lease-fenced}.
 */
@Service
class LeaseReports {

    private final Leases views;
    private final PartyChecks parties;
    private final LeaseMetrics metrics;
    private final TransactionalOperator tx;
    private final Incarnations incarnations;
    private final DestinationRegions regions;
    private final LeaseAggregates aggregates;
    private final LeaseWriter writer;
    private final Clock clock;

    LeaseReports(
            Leases views,
            PartyChecks parties,
            LeaseMetrics metrics,
            TransactionalOperator tx,
            Incarnations incarnations,
            DestinationRegions regions,
            LeaseAggregates aggregates,
            LeaseWriter writer,
            Clock clock) {
        this.views = views;
        this.parties = parties;
        this.metrics = metrics;
        this.tx = tx;
        this.incarnations = incarnations;
        this.regions = regions;
        this.aggregates = aggregates;
        this.writer = writer;
        this.clock = clock;
    }

    /** Destinations of many leases of one target incarnation, in order, as if each were sent alone. */
    Mono<List<ItemResult<LeaseReportResult>>> destinations(
            UUID targetId, LeaseRequests.DestinationsRequest req, ApiPrincipal p) {
        List<UUID> ids = req.destinations().stream()
                .map(LeaseRequests.DestinationEntry::leaseId)
                .toList();
        return regions.registry(targetId)
                .flatMap(registry -> batch(
                        targetId,
                        req.fencingEpoch(),
                        p,
                        ids,
                        i -> destination(req.destinations().get(i).ranks(), registry)));
    }

    /** Commits of many leases of one target incarnation, in order, as if each were sent alone. */
    Mono<List<ItemResult<LeaseReportResult>>> commits(UUID targetId, LeaseRequests.CommitsRequest req, ApiPrincipal p) {
        List<UUID> ids =
                req.commits().stream().map(LeaseRequests.CommitEntry::leaseId).toList();
        return batch(
                targetId,
                req.fencingEpoch(),
                p,
                ids,
                i -> new LeaseReport.Commit(req.commits().get(i).committedBlocks()));
    }

    /**
     * One transaction for the whole batch of the target's reports; should an allocation overlap a
     * held slot range (which fails the statement), every item is sent again alone.
     */
    private Mono<List<ItemResult<LeaseReportResult>>> batch(
            UUID targetId,
            long epoch,
            ApiPrincipal p,
            List<UUID> ids,
            java.util.function.IntFunction<LeaseReport> reports) {
        return incarnations.requireOwnership(targetId, p).flatMap(inc -> {
            if (inc.fencingEpoch() != epoch) {
                metrics.stale("incarnation");
                return Mono.error(LeaseProblems.staleEpoch("incarnation " + targetId, epoch, inc.fencingEpoch()));
            }
            List<Integer> all =
                    java.util.stream.IntStream.range(0, ids.size()).boxed().toList();
            return items(targetId, ids, all, reports, p.actor())
                    .onErrorResume(
                            DataIntegrityViolationException.class,
                            e -> Flux.fromIterable(all)
                                    .concatMap(i -> items(targetId, ids, List.of(i), reports, p.actor())
                                            .onErrorResume(
                                                    DataIntegrityViolationException.class,
                                                    x -> Mono.just(List.of(ItemResult.<LeaseReportResult>failed(
                                                            LeaseProblems.destinationOverlap(ids.get(i)))))))
                                    .flatMapIterable(r -> r)
                                    .collectList());
        });
    }

    /** The items {@code indexes} of a batch, decided in order and written in one transaction. */
    private Mono<List<ItemResult<LeaseReportResult>>> items(
            UUID targetId,
            List<UUID> ids,
            List<Integer> indexes,
            java.util.function.IntFunction<LeaseReport> reports,
            String actor) {
        Instant now = clock.instant();
        List<LeaseDecision> decisions = new ArrayList<>();
        List<UUID> locked = indexes.stream().map(ids::get).distinct().toList();
        return aggregates
                .lock(new LinkedHashSet<>(locked))
                .flatMap(leases -> {
                    Map<UUID, LeaseAggregate> current = new HashMap<>(leases);
                    List<ItemResult<LeaseReportResult>> results = new ArrayList<>();
                    for (int i : indexes) {
                        UUID id = ids.get(i);
                        LeaseAggregate lease = current.get(id);
                        if (lease == null || !lease.row().targetId().equals(targetId)) {
                            results.add(ItemResult.failed(LeaseProblems.noSuchLease(id)));
                            continue;
                        }
                        LeaseDecision d = LeaseDecider.decide(lease, reports.apply(i), actor, now);
                        current.put(id, d.after());
                        decisions.add(d);
                        results.add(
                                d.problem() != null
                                        ? ItemResult.failed(d.problem())
                                        : ItemResult.ok(new LeaseReportResult(id, d.state())));
                    }
                    return writer.write(decisions, now).thenReturn(results);
                })
                .as(tx::transactional)
                .doOnNext(r -> writer.published(decisions));
    }

    private static LeaseReport destination(
            List<LeaseRequests.RankDestination> ranks, DestinationRegions.Registry registry) {
        List<LeaseReport.RankDestination> runs = ranks.stream()
                .map(r -> new LeaseReport.RankDestination(r.rank(), r.regionRef(), SlotRuns.of(r.slots())))
                .toList();
        String unregistered = runs.stream()
                .map(r -> registry.problem(r.rank(), r.regionRef(), r.runs()))
                .filter(java.util.Objects::nonNull)
                .findFirst()
                .orElse(null);
        return new LeaseReport.Destination(runs, unregistered);
    }

    Mono<LeaseView> destination(UUID id, LeaseRequests.DestinationRequest req, ApiPrincipal p) {
        return decided(
                        id,
                        lease -> parties.target(lease, p, req.fencingEpoch()),
                        lease -> regions.registry(lease.targetId()).map(r -> destination(req.ranks(), r)),
                        p.actor())
                .onErrorMap(DataIntegrityViolationException.class, e -> LeaseProblems.destinationOverlap(id));
    }

    Mono<LeaseView> commit(UUID id, LeaseRequests.CommitRequest req, ApiPrincipal p) {
        return decided(
                id,
                lease -> parties.target(lease, p, req.fencingEpoch()),
                lease -> Mono.just(new LeaseReport.Commit(req.committedBlocks())),
                p.actor());
    }

    /** The target gives up (or an operator forces it): released at once unless a transfer may be writing. */
    Mono<LeaseView> abort(UUID id, LeaseRequests.AbortRequest req, ApiPrincipal p) {
        String reason = req.reason() == null || req.reason().isBlank()
                ? "aborted"
                : req.reason().strip();
        return decided(
                id,
                lease -> parties.target(lease, p, req.fencingEpoch()),
                lease -> Mono.just(new LeaseReport.Abort(reason)),
                p.actor());
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
                lease -> Mono.just(new LeaseReport.Quiesced(source, witness, req.evidence())),
                p.actor());
    }

    /**
     * One report through the decider and the writer, as a batch of one: the lease locked and read,
     * the caller checked, the decision written, and the lease answered as the transaction left it.
     * A refusal changes nothing; a problem that comes with changes is answered once they committed.
     */
    private Mono<LeaseView> decided(
            UUID id, Function<LeaseRow, Mono<?>> check, Function<LeaseRow, Mono<LeaseReport>> report, String actor) {
        Instant now = clock.instant();
        List<LeaseDecision> written = new ArrayList<>(1);
        return aggregates
                .lock(List.of(id))
                .flatMap(found -> Mono.justOrEmpty(found.get(id)))
                .switchIfEmpty(Mono.error(() -> LeaseProblems.noSuchLease(id)))
                .flatMap(lease -> check.apply(lease.row())
                        .then(report.apply(lease.row()))
                        .map(r -> LeaseDecider.decide(lease, r, actor, now)))
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
                    @Nullable
                    KvReuseException after =
                            written.isEmpty() ? null : written.getFirst().problem();
                    return after == null ? Mono.just(view) : Mono.error(after);
                });
    }
}
