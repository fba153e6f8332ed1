package io.kvreuse.lease;

import io.kvreuse.error.ItemResult;
import io.kvreuse.region.DestinationRegions;
import io.kvreuse.security.ApiPrincipal;
import java.util.List;
import java.util.Objects;
import java.util.UUID;
import java.util.function.Function;
import java.util.function.IntFunction;
import java.util.stream.IntStream;
import org.springframework.dao.DataIntegrityViolationException;
import org.springframework.stereotype.Service;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The target engine's reports (destination, commit, abort) and quiescence evidence, one or many at
 * a time, decided together with concurrent requests' reports ({@link ReportGroups}) and each
 * answered from its decided lease. Another engine's lease answers 404; a
 * stale reporter epoch 409 {@code stale-epoch}; a lease made under epochs that are no longer
 * current 409 {@code lease-fenced}. Should an allocation overlap a held slot range (which fails the
 * statement), the group's requests are sent again alone, and a batch's items one by one.
 */
@Service
class LeaseReports {

    private final PartyChecks parties;
    private final DestinationRegions regions;
    private final ReportGroups groups;

    LeaseReports(PartyChecks parties, DestinationRegions regions, ReportGroups groups) {
        this.parties = parties;
        this.regions = regions;
        this.groups = groups;
    }

    /** Destinations of many leases of one target incarnation, in order, as if each were sent alone. */
    Mono<List<ItemResult<LeaseReportResult>>> destinations(
            UUID targetId, LeaseRequests.DestinationsRequest req, ApiPrincipal p) {
        List<LeaseRequests.DestinationEntry> items = req.destinations();
        return regions.registry(targetId)
                .flatMap(registry -> batch(
                        targetId,
                        req.fencingEpoch(),
                        p,
                        items.stream()
                                .map(LeaseRequests.DestinationEntry::leaseId)
                                .toList(),
                        i -> destination(items.get(i).ranks(), registry)));
    }

    /** Commits of many leases of one target incarnation, in order, as if each were sent alone. */
    Mono<List<ItemResult<LeaseReportResult>>> commits(UUID targetId, LeaseRequests.CommitsRequest req, ApiPrincipal p) {
        List<LeaseRequests.CommitEntry> items = req.commits();
        return batch(
                targetId,
                req.fencingEpoch(),
                p,
                items.stream().map(LeaseRequests.CommitEntry::leaseId).toList(),
                i -> new LeaseReport.Commit(items.get(i).committedBlocks()));
    }

    /** A batch of the target's reports, checked once for the incarnation and per item for the lease's target. */
    private Mono<List<ItemResult<LeaseReportResult>>> batch(
            UUID targetId, long epoch, ApiPrincipal p, List<UUID> ids, IntFunction<LeaseReport> reports) {
        return parties.incarnation(targetId, epoch, p).then(Mono.defer(() -> {
            List<ReportGroups.Grouped> items = IntStream.range(0, ids.size())
                    .mapToObj(i -> ReportGroups.checked(
                            ids.get(i),
                            p.actor(),
                            lease -> lease.row().targetId().equals(targetId)
                                    ? Mono.just(reports.apply(i))
                                    : Mono.error(LeaseProblems.noSuchLease(ids.get(i)))))
                    .toList();
            return groups.submit(items)
                    .onErrorResume(
                            DataIntegrityViolationException.class,
                            e -> Flux.fromIterable(items)
                                    .concatMap(g -> groups.submit(List.of(g))
                                            .map(List::getFirst)
                                            .onErrorResume(
                                                    DataIntegrityViolationException.class,
                                                    x -> Mono.just(ItemResult.failed(
                                                            LeaseProblems.destinationOverlap(g.leaseId())))))
                                    .collectList())
                    .map(results -> results.stream()
                            .map(r -> ReportGroups.answer(
                                    r,
                                    d -> new LeaseReportResult(d.after().row().leaseId(), d.state())))
                            .toList());
        }));
    }

    private static LeaseReport destination(
            List<LeaseRequests.RankDestination> ranks, DestinationRegions.Registry registry) {
        List<LeaseReport.RankDestination> runs = ranks.stream()
                .map(r -> new LeaseReport.RankDestination(r.rank(), r.regionRef(), SlotRuns.of(r.slots())))
                .toList();
        String unregistered = runs.stream()
                .map(r -> registry.problem(r.rank(), r.regionRef(), r.runs()))
                .filter(Objects::nonNull)
                .findFirst()
                .orElse(null);
        return new LeaseReport.Destination(runs, unregistered);
    }

    Mono<LeaseView> destination(UUID id, LeaseRequests.DestinationRequest req, ApiPrincipal p) {
        return single(
                        id,
                        p,
                        lease -> parties.engineSide(lease, false, p, req.fencingEpoch())
                                .then(regions.registry(lease.row().targetId()))
                                .map(r -> destination(req.ranks(), r)))
                .onErrorMap(DataIntegrityViolationException.class, e -> LeaseProblems.destinationOverlap(id));
    }

    Mono<LeaseView> commit(UUID id, LeaseRequests.CommitRequest req, ApiPrincipal p) {
        return single(
                id,
                p,
                lease -> parties.engineSide(lease, false, p, req.fencingEpoch())
                        .thenReturn(new LeaseReport.Commit(req.committedBlocks())));
    }

    /** The target gives up (or an operator forces it): released at once unless a transfer may be writing. */
    Mono<LeaseView> abort(UUID id, LeaseRequests.AbortRequest req, ApiPrincipal p) {
        String reason = req.reason() == null || req.reason().isBlank()
                ? "aborted"
                : req.reason().strip();
        return single(
                id,
                p,
                lease -> parties.engineSide(lease, false, p, req.fencingEpoch())
                        .thenReturn(new LeaseReport.Abort(reason)));
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
        return single(
                id,
                p,
                lease -> parties.quiescenceWitness(lease, source, p, req.fencingEpoch())
                        .thenReturn(new LeaseReport.Quiesced(source, witness, req.evidence())));
    }

    /**
     * One report, checked on its locked lease and decided in the next group. A refusal changes
     * nothing; a problem that comes with changes is answered once they committed; otherwise the
     * lease is answered as the decision left it, which is what the transaction wrote.
     */
    private Mono<LeaseView> single(UUID id, ApiPrincipal p, Function<LeaseAggregate, Mono<LeaseReport>> report) {
        return groups.submit(List.of(ReportGroups.checked(id, p.actor(), report)))
                .map(results -> ReportGroups.answer(results.getFirst(), d -> LeaseView.of(d.after()))
                        .orThrow());
    }
}
