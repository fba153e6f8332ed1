package io.kvreuse.lease;

import io.kvreuse.error.ItemResult;
import io.kvreuse.protocol.PartState;
import io.kvreuse.security.ApiPrincipal;
import io.kvreuse.security.Role;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import org.jspecify.annotations.Nullable;
import org.springframework.stereotype.Service;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Leases for the other features: reads with visibility, and the node agent's side handed over by
 * {@code orders} (the agent's HTTP edge): order claims, inside the claim's transaction, and part
 * reports, decided by the lease decider on the locked leases with their orders and parts (the order
 * and part rows are the lease's). A lease is visible to the engines that own its donor or target,
 * to the agents of their hosts, and to operators.
 */
@Service
public class Leases {

    private final LeaseStore leases;
    private final HoldStore holds;
    private final ReportGroups groups;
    private final OrderWriter orders;

    Leases(LeaseStore leases, HoldStore holds, ReportGroups groups, OrderWriter orders) {
        this.leases = leases;
        this.holds = holds;
        this.groups = groups;
        this.orders = orders;
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

    /** Ids of leases on either side of an incarnation that still hold or may touch memory. */
    public Flux<UUID> unfinished(UUID incarnationId) {
        return leases.unfinished(incarnationId);
    }

    /** The unfinished leases of an incarnation, with what they hold (for cleanup plans). */
    public Mono<List<LeaseView>> ofIncarnation(UUID incarnationId) {
        return leases.unfinished(incarnationId).concatMap(this::view).collectList();
    }

    /**
     * Call inside a transaction: claims up to {@code limit} of the host's orders (queued ones, and
     * claimed ones no part report acknowledged since {@code stale}); a SOURCE_PINNED lease of a
     * claimed order moves to TRANSFERRING, since its transfer may start writing now.
     */
    public Mono<LongPoll.Look<ClaimedOrder>> claimOrders(
            String hostId, String actor, Instant now, Instant stale, int limit) {
        return orders.claim(hostId, actor, now, stale, limit).flatMap(claimed -> {
            List<UUID> ids = claimed.found().stream().map(ClaimedOrder::leaseId).toList();
            List<LeaseReport> claims = ids.stream()
                    .<LeaseReport>map(id -> new LeaseReport.OrderClaimed())
                    .toList();
            return ids.isEmpty()
                    ? Mono.just(claimed)
                    : groups.decide(ReportGroups.unchecked(ids, claims, actor)).thenReturn(claimed);
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
     * The agent's part reports, many leases at once, each decided as if it were sent alone and in
     * order, in a transaction of their own shared with concurrent reports. Answers, per report, the
     * lease's state after it or its problem.
     */
    public Mono<List<ItemResult<LeaseState>>> partsReported(List<PartReport> reports, String actor) {
        List<LeaseReport.Part> parts = reports.stream()
                .map(r -> new LeaseReport.Part(
                        r.orderId(), r.rank(), r.state(), r.bytes(), r.durationUs(), r.nativeStatus(), r.detail()))
                .toList();
        return groups.submit(ReportGroups.unchecked(
                        reports.stream().map(PartReport::leaseId).toList(), parts, actor))
                .map(results -> results.stream()
                        .map(r -> ReportGroups.answer(r, LeaseDecision::state))
                        .toList());
    }
}
