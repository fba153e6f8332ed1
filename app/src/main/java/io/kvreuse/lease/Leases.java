package io.kvreuse.lease;

import static io.kvreuse.store.Sql.orNull;

import io.kvreuse.error.ItemResult;
import io.kvreuse.protocol.PartState;
import io.kvreuse.security.ApiPrincipal;
import io.kvreuse.security.Role;
import io.kvreuse.store.LongPoll;
import io.r2dbc.spi.Readable;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.List;
import java.util.UUID;
import org.jspecify.annotations.Nullable;
import org.springframework.r2dbc.core.DatabaseClient;
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

    /** The leases a principal's filter selects: an owner subject's or an agent's hosts' (null: all), newest first. */
    private static final String VISIBLE = """
            SELECT a.read FROM kvreuse_lease_aggregates(ARRAY(SELECT l.lease_id FROM lease l
            WHERE (CAST(:state AS TEXT) IS NULL OR l.state = :state)
              AND (CAST(:only AS UUID) IS NULL OR l.lease_id = :only)
              AND (CAST(:inc AS UUID) IS NULL OR l.donor_incarnation_id = :inc OR l.target_incarnation_id = :inc)
              AND (CAST(:owner AS TEXT) IS NULL OR EXISTS (SELECT 1 FROM engine_incarnation i
                    WHERE i.incarnation_id IN (l.donor_incarnation_id, l.target_incarnation_id) AND i.owner_subject = :owner))
              AND (CAST(:agent AS TEXT) IS NULL OR EXISTS (SELECT 1 FROM node_agent a JOIN engine_incarnation i
                    ON i.host_id = a.host_id AND i.incarnation_id IN (l.donor_incarnation_id, l.target_incarnation_id)
                    WHERE a.owner_subject = :agent))
            ORDER BY l.created_at DESC, l.lease_id LIMIT :limit)) AS a
            JOIN lease l ON l.lease_id = a.lease_id
            ORDER BY l.created_at DESC, l.lease_id""";

    /**
     * Claims up to {@code :limit} of host {@code :h}'s orders: queued ones, and claimed ones no part
     * report acknowledged since {@code :stale}. {@code FOR UPDATE SKIP LOCKED} on the order and its
     * lease, so two pollers never receive the same order. With none claimed, the one row says whether
     * one is due (but locked by another poll) and when the next claim goes stale.
     */
    private static final String CLAIM = """
            WITH due AS (
                SELECT o.order_id FROM transfer_order o JOIN lease l ON l.lease_id = o.lease_id
                WHERE o.host_id = :h
                  AND (o.state = 'QUEUED' OR (o.state = 'CLAIMED' AND o.acked_at IS NULL AND o.claimed_at < :stale))
                ORDER BY o.created_at LIMIT :limit
                FOR UPDATE OF o, l SKIP LOCKED),
            claimed AS (
                UPDATE transfer_order o SET state = 'CLAIMED', claimed_at = :now, claimed_by = :by, claims = o.claims + 1
                FROM due WHERE o.order_id = due.order_id
                RETURNING o.order_id, o.lease_id, o.host_id, o.donor_host_id, o.claims, o.created_at),
            pending AS (
                SELECT count(*) FILTER (WHERE state = 'QUEUED' OR claimed_at < :stale) AS due, min(claimed_at) AS next
                FROM transfer_order
                WHERE host_id = :h AND (state = 'QUEUED' OR (state = 'CLAIMED' AND acked_at IS NULL)))
            SELECT c.order_id, c.lease_id, c.host_id, c.donor_host_id, c.claims, p.due, p.next
            FROM pending p LEFT JOIN claimed c ON true ORDER BY c.created_at, c.order_id
            """;

    private final LeaseAggregates aggregates;
    private final ReportGroups groups;
    private final DatabaseClient db;

    Leases(LeaseAggregates aggregates, ReportGroups groups, DatabaseClient db) {
        this.aggregates = aggregates;
        this.groups = groups;
        this.db = db;
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
        boolean engine = p.role() == Role.ENGINE || p.role() == Role.ROUTER;
        return aggregates
                .read(
                        VISIBLE,
                        s -> s.bind("state", orNull(state == null ? null : state.name(), String.class))
                                .bind("inc", orNull(incarnationId, UUID.class))
                                .bind("owner", orNull(engine ? p.subject() : null, String.class))
                                .bind("agent", orNull(p.role() == Role.AGENT ? p.subject() : null, String.class))
                                .bind("only", orNull(only, UUID.class))
                                .bind("limit", limit))
                .map(LeaseView::of);
    }

    /** The unfinished leases of an incarnation, with what they hold (for cleanup plans). */
    public Mono<List<LeaseView>> ofIncarnation(UUID incarnationId) {
        return aggregates
                .read(LeaseAggregates.UNFINISHED, s -> s.bind("i", incarnationId))
                .map(LeaseView::of)
                .collectList();
    }

    /**
     * Call inside a transaction: claims up to {@code limit} of the host's orders (queued ones, and
     * claimed ones no part report acknowledged since {@code stale}); a SOURCE_PINNED lease of a
     * claimed order moves to TRANSFERRING, since its transfer may start writing now. With none
     * claimed, the look says until when none of the host's orders comes due without a new one (null:
     * one is due but locked by another poll).
     */
    public Mono<LongPoll.Look<ClaimedOrder>> claimOrders(
            String hostId, String actor, Instant now, Instant stale, int limit) {
        return db.sql(CLAIM)
                .bind("h", hostId)
                .bind("limit", limit)
                .bind("stale", LeaseRow.at(stale))
                .bind("now", LeaseRow.at(now))
                .bind("by", actor)
                .map((r, m) -> r.get("order_id", UUID.class) == null
                        ? LongPoll.Look.<ClaimedOrder>none(
                                r.get("due", Long.class),
                                r.get("next", OffsetDateTime.class),
                                Duration.between(stale, now))
                        : new LongPoll.Look<>(List.of(claimed(r)), null))
                .all()
                .collectList()
                .map(LongPoll.Look::of)
                .flatMap(look -> look.found().isEmpty()
                        ? Mono.just(look)
                        : groups.decide(look.found().stream()
                                        .map(o -> ReportGroups.unchecked(
                                                o.leaseId(), new LeaseReport.OrderClaimed(), actor))
                                        .toList())
                                .thenReturn(look));
    }

    private static ClaimedOrder claimed(Readable r) {
        return new ClaimedOrder(
                r.get("order_id", UUID.class),
                r.get("lease_id", UUID.class),
                r.get("host_id", String.class),
                String.valueOf(r.get("donor_host_id", String.class)),
                r.get("claims", Integer.class));
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
        List<ReportGroups.Grouped> parts = reports.stream()
                .map(r -> ReportGroups.unchecked(
                        r.leaseId(),
                        new LeaseReport.Part(
                                r.orderId(),
                                r.rank(),
                                r.state(),
                                r.bytes(),
                                r.durationUs(),
                                r.nativeStatus(),
                                r.detail()),
                        actor))
                .toList();
        return groups.submit(parts)
                .map(results -> results.stream()
                        .map(r -> ReportGroups.answer(r, LeaseDecision::state))
                        .toList());
    }
}
