package io.kvreuse.lease;

import io.kvreuse.protocol.PartState;
import io.kvreuse.security.ApiPrincipal;
import io.kvreuse.security.Role;
import java.util.List;
import java.util.UUID;
import org.jspecify.annotations.Nullable;
import org.springframework.stereotype.Service;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Leases for the other features: reads with visibility, and the hooks the transfer-order side calls
 * inside its own transaction (an order was claimed, a part reported). A lease is visible to the
 * engines that own its donor or target, to the agents of their hosts, and to operators.
 */
@Service
public class Leases {

    private final LeaseStore leases;
    private final HoldStore holds;
    private final TransferOutcomes outcomes;
    private final LeaseLedger ledger;
    private final LeaseBatches batches;

    Leases(LeaseStore leases, HoldStore holds, TransferOutcomes outcomes, LeaseLedger ledger, LeaseBatches batches) {
        this.leases = leases;
        this.holds = holds;
        this.outcomes = outcomes;
        this.ledger = ledger;
        this.batches = batches;
    }

    /** The lease with what it holds, without visibility checks (operators' tools, cleanup). */
    public Mono<LeaseView> view(UUID id) {
        return leases.find(id)
                .switchIfEmpty(Mono.error(() -> LeaseProblems.noSuchLease(id)))
                .flatMap(this::view);
    }

    private Mono<LeaseView> view(LeaseRow row) {
        return Mono.zip(
                        holds.pins(row.leaseId()).collectList(),
                        holds.destinations(row.leaseId()).collectList())
                .map(t -> LeaseView.of(row, t.getT1(), t.getT2()));
    }

    /** The lease if the principal may see it; 404 otherwise. */
    public Mono<LeaseView> find(UUID id, ApiPrincipal p) {
        return list(null, null, p, 1, id).next().switchIfEmpty(Mono.error(() -> LeaseProblems.noSuchLease(id)));
    }

    /** Leases visible to the principal, newest first, filtered by state and by an incarnation on either side. */
    public Flux<LeaseView> list(@Nullable LeaseState state, @Nullable UUID incarnationId, ApiPrincipal p, int limit) {
        return list(state, incarnationId, p, limit, null);
    }

    private Flux<LeaseView> list(
            @Nullable LeaseState state, @Nullable UUID incarnationId, ApiPrincipal p, int limit, @Nullable UUID only) {
        String owner = p.role() == Role.ENGINE || p.role() == Role.ROUTER ? p.subject() : null;
        String agent = p.role() == Role.AGENT ? p.subject() : null;
        return leases.list(state, incarnationId, owner, agent, only, limit)
                .collectList()
                .flatMapMany(Flux::fromIterable)
                .concatMap(this::view);
    }

    /** Call inside the claiming transaction: the agent took the order, so a transfer may start writing. */
    public Mono<LeaseState> orderClaimed(UUID leaseId, String actor) {
        return leases.lock(leaseId)
                .flatMap(row -> row.state() == LeaseState.SOURCE_PINNED
                        ? ledger.move(row, LeaseState.TRANSFERRING, actor, null, null)
                                .map(LeaseRow::state)
                        : Mono.just(row.state()));
    }

    /** Call inside the reporting transaction after a part changed: delivers, fails or marks the lease uncertain. */
    public Mono<LeaseState> partsChanged(UUID leaseId, String actor) {
        return leases.lock(leaseId).flatMap(row -> outcomes.decide(row, actor)).map(LeaseRow::state);
    }

    /** Locks the lease row first, so a part report and every other lease change serialise in one order. */
    public Mono<LeaseState> lock(UUID leaseId) {
        return leases.lock(leaseId)
                .map(LeaseRow::state)
                .switchIfEmpty(Mono.error(() -> LeaseProblems.noSuchLease(leaseId)));
    }

    /** Ids of leases on either side of an incarnation that still hold or may touch memory. */
    public Flux<UUID> unfinished(UUID incarnationId) {
        return leases.unfinished(incarnationId);
    }

    /** The unfinished leases of an incarnation, with what they hold (for cleanup plans). */
    public Mono<List<LeaseView>> ofIncarnation(UUID incarnationId) {
        return leases.unfinished(incarnationId).concatMap(this::view).collectList();
    }

    /**
     * Call inside the claiming transaction, with the claimed orders' leases: a SOURCE_PINNED lease
     * moves to TRANSFERRING, since its transfer may start writing now. Answers each lease's state.
     */
    public Mono<List<LeaseState>> ordersClaimed(List<UUID> leaseIds, String actor) {
        return batches.ordersClaimed(leaseIds, actor).map(d -> {
            batches.committed(d);
            return d.results();
        });
    }

    /** One part report for {@link #partsReported}, for an order the agent was checked to report on. */
    public record PartReport(
            UUID orderId,
            UUID leaseId,
            int rank,
            PartState state,
            long bytes,
            long durationUs,
            @Nullable Integer nativeStatus,
            @Nullable String detail) {}

    /**
     * Call inside a transaction: applies the everyday part reports (RUNNING, or DONE — delivering
     * the lease when every rank is done) of many leases at once. Answers, per report, the lease's
     * state after it, or null for a report that must go through the single-report path.
     */
    public Mono<List<LeaseState>> partsReported(List<PartReport> reports, String actor) {
        return batches.parts(
                        reports.stream()
                                .map(r -> new LeaseBatches.PartItem(
                                        r.orderId(),
                                        r.leaseId(),
                                        r.rank(),
                                        new BatchStore.PartUpdate(
                                                r.orderId(),
                                                r.rank(),
                                                r.state().name(),
                                                r.bytes(),
                                                r.durationUs(),
                                                r.nativeStatus(),
                                                r.detail())))
                                .toList(),
                        actor)
                .map(d -> {
                    batches.committed(d);
                    return d.results();
                });
    }
}
