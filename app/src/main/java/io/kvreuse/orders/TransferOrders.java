package io.kvreuse.orders;

import io.kvreuse.error.ItemResult;
import io.kvreuse.error.KvReuseException;
import io.kvreuse.error.ProblemType;
import io.kvreuse.lease.LeaseState;
import io.kvreuse.lease.Leases;
import io.kvreuse.protocol.PartReport;
import io.kvreuse.protocol.PartState;
import io.kvreuse.protocol.UnfinishedOrder;
import io.kvreuse.security.ApiPrincipal;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.stereotype.Service;
import org.springframework.transaction.reactive.TransactionalOperator;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The host's unfinished orders and the agent's part reports ({@link OrderPoll} hands orders out).
 * The lease row is locked before any part row, like every lease change.
 */
@Service
public class TransferOrders {

    private final DatabaseClient db;
    private final TransactionalOperator tx;
    private final NodeAgents agents;
    private final Leases leases;

    TransferOrders(DatabaseClient db, TransactionalOperator tx, NodeAgents agents, Leases leases) {
        this.db = db;
        this.tx = tx;
        this.agents = agents;
        this.leases = leases;
    }

    /**
     * The host's claimed orders with parts that never reached a final report. An agent process reads
     * them once at start, before its first poll: any it finds were claimed by an earlier process.
     */
    public Mono<List<UnfinishedOrder>> unfinished(String hostId, ApiPrincipal p) {
        return agents.requireOwner(hostId, p)
                .thenMany(db.sql("""
                                SELECT o.order_id, o.lease_id, o.claims, COALESCE(o.claimed_at, o.created_at) AS claimed_at, p.rank, p.state
                                FROM transfer_order o JOIN transfer_part p ON p.order_id = o.order_id
                                WHERE o.host_id = :h AND o.state IN ('CLAIMED', 'UNCERTAIN')
                                  AND p.state NOT IN ('DONE', 'FAILED', 'QUIESCED')
                                ORDER BY o.created_at, o.order_id, p.rank LIMIT 10000
                                """)
                        .bind("h", hostId)
                        .map((r, m) -> new UnfinishedOrder(
                                r.get("order_id", UUID.class),
                                r.get("lease_id", UUID.class),
                                r.get("claims", Integer.class),
                                r.get("claimed_at", java.time.OffsetDateTime.class)
                                        .toInstant(),
                                List.of(new UnfinishedOrder.Part(
                                        r.get("rank", Integer.class),
                                        PartState.valueOf(r.get("state", String.class))))))
                        .all())
                .collectList()
                .map(TransferOrders::byOrder);
    }

    private static List<UnfinishedOrder> byOrder(List<UnfinishedOrder> rows) {
        Map<UUID, UnfinishedOrder> orders = new java.util.LinkedHashMap<>();
        for (UnfinishedOrder row : rows) {
            orders.merge(
                    row.orderId(),
                    row,
                    (a, b) -> new UnfinishedOrder(
                            a.orderId(),
                            a.leaseId(),
                            a.claims(),
                            a.claimedAt(),
                            java.util.stream.Stream.concat(a.parts().stream(), b.parts().stream())
                                    .toList()));
        }
        return List.copyOf(orders.values());
    }

    private record OrderRow(UUID leaseId, String hostId, String donorHost) {}

    /** A part's progress; a report on a part already final answers as is if it says the same, 409 otherwise. */
    public Mono<PartReport.Ack> report(UUID orderId, int rank, PartReport req, ApiPrincipal p) {
        return orders(List.of(orderId)).flatMap(found -> {
            OrderRow o = found.get(orderId);
            if (o == null) {
                return Mono.error(noSuchOrder(orderId));
            }
            return agents.requireOwner(o.hostId(), p)
                    .onErrorResume(KvReuseException.class, e -> agents.requireOwner(o.donorHost(), p))
                    .flatMap(epoch -> {
                        if (req.fencingEpoch() != epoch) {
                            return Mono.error(NodeAgents.staleEpoch(o.hostId(), req.fencingEpoch(), epoch));
                        }
                        return leases.partsReported(List.of(report(orderId, o.leaseId(), rank, req)), p.actor())
                                .map(results -> results.getFirst().orThrow())
                                .map(state -> new PartReport.Ack(orderId, rank, req.state(), state.name()));
                    });
        });
    }

    /**
     * Part reports of many orders, for agents with many transfers in flight: one request and one
     * transaction for the everyday reports (RUNNING, DONE), every other report one by one after it,
     * each answered in its place as {@link #report} would answer it alone. The agent reports for
     * {@code hostId} at its current epoch (a stale epoch refuses the whole batch with 409).
     */
    public Mono<List<ItemResult<PartReport.Ack>>> reports(String hostId, PartReport.Batch req, ApiPrincipal p) {
        return agents.requireOwner(hostId, p).flatMap(epoch -> {
            if (req.fencingEpoch() != epoch) {
                return Mono.error(NodeAgents.staleEpoch(hostId, req.fencingEpoch(), epoch));
            }
            List<PartReport.Entry> items = req.reports();
            return orders(items.stream()
                            .map(PartReport.Entry::orderId)
                            .distinct()
                            .toList())
                    .flatMap(found -> {
                        List<Integer> fastIndexes = new java.util.ArrayList<>();
                        List<Leases.PartReport> fast = new java.util.ArrayList<>();
                        for (int i = 0; i < items.size(); i++) {
                            PartReport.Entry e = items.get(i);
                            OrderRow o = found.get(e.orderId());
                            if (o != null
                                    && (o.hostId().equals(hostId)
                                            || o.donorHost().equals(hostId))) {
                                fastIndexes.add(i);
                                fast.add(report(e.orderId(), o.leaseId(), e.rank(), e.report(req.fencingEpoch())));
                            }
                        }
                        return (fast.isEmpty()
                                        ? Mono.just(List.<ItemResult<LeaseState>>of())
                                        : leases.partsReported(fast, p.actor()))
                                .flatMap(states -> {
                                    List<ItemResult<LeaseState>> byItem = new java.util.ArrayList<>(
                                            java.util.Collections.nCopies(items.size(), null));
                                    for (int k = 0; k < fastIndexes.size(); k++) {
                                        byItem.set(fastIndexes.get(k), states.get(k));
                                    }
                                    return Flux.range(0, items.size())
                                            .concatMap(i -> {
                                                PartReport.Entry e = items.get(i);
                                                ItemResult<LeaseState> decided = byItem.get(i);
                                                if (decided != null) {
                                                    return Mono.just(
                                                            decided.error() == null
                                                                    ? ItemResult.ok(new PartReport.Ack(
                                                                            e.orderId(),
                                                                            e.rank(),
                                                                            e.state(),
                                                                            decided.orThrow()
                                                                                    .name()))
                                                                    : ItemResult.<PartReport.Ack>failed(
                                                                            decided.error()));
                                                }
                                                return report(e.orderId(), e.rank(), e.report(req.fencingEpoch()), p)
                                                        .map(ItemResult::ok)
                                                        .onErrorResume(
                                                                KvReuseException.class,
                                                                x -> Mono.just(ItemResult.<PartReport.Ack>failed(x)));
                                            })
                                            .collectList();
                                });
                    });
        });
    }

    private static Leases.PartReport report(UUID orderId, UUID leaseId, int rank, PartReport req) {
        return new Leases.PartReport(
                orderId, leaseId, rank, req.state(), req.bytes(), req.durationUs(), req.nativeStatus(), req.detail());
    }

    private Mono<Map<UUID, OrderRow>> orders(List<UUID> orderIds) {
        return db.sql("SELECT order_id, lease_id, host_id, donor_host_id FROM transfer_order"
                        + " WHERE order_id = ANY(CAST(:o AS UUID[]))")
                .bind("o", orderIds.stream().map(UUID::toString).toArray(String[]::new))
                .map((r, m) -> Map.entry(
                        r.get("order_id", UUID.class),
                        new OrderRow(
                                r.get("lease_id", UUID.class),
                                r.get("host_id", String.class),
                                String.valueOf(r.get("donor_host_id", String.class)))))
                .all()
                .collectMap(Map.Entry::getKey, Map.Entry::getValue);
    }

    private static KvReuseException noSuchOrder(UUID orderId) {
        return new KvReuseException(ProblemType.NO_SUCH_ORDER, "no order " + orderId);
    }
}
