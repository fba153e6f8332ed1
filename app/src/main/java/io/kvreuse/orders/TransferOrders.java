package io.kvreuse.orders;

import io.kvreuse.error.ItemResult;
import io.kvreuse.error.KvReuseException;
import io.kvreuse.error.ProblemType;
import io.kvreuse.lease.ClaimedOrder;
import io.kvreuse.lease.LeaseState;
import io.kvreuse.lease.Leases;
import io.kvreuse.lease.LongPoll;
import io.kvreuse.protocol.NixlAgentNames;
import io.kvreuse.protocol.PartReport;
import io.kvreuse.protocol.PartState;
import io.kvreuse.protocol.TransferOrder;
import io.kvreuse.protocol.UnfinishedOrder;
import io.kvreuse.security.ApiPrincipal;
import io.kvreuse.store.PgNotifications;
import io.r2dbc.postgresql.codec.Json;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.stereotype.Service;
import org.springframework.transaction.reactive.TransactionalOperator;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.json.JsonMapper;

/**
 * The per-host order queue and part reports. Orders are claimed with {@code FOR UPDATE SKIP
 * LOCKED}, so two pollers — on one replica or two — never receive the same order; a claimed order
 * that no part report acknowledged within the visibility timeout ({@code
 * kvreuse.leases.order-visibility}, default 5 s) is handed out again, to cover an agent that died
 * between claim and first report. The lease row is locked before any part row, like every lease change.
 */
@Service
public class TransferOrders {

    private static final TypeReference<List<List<Integer>>> RUNS = new TypeReference<>() {};

    private final DatabaseClient db;
    private final TransactionalOperator tx;
    private final NodeAgents agents;
    private final Leases leases;
    private final LongPoll longPoll;
    private final JsonMapper json;
    private final Clock clock;
    private final Duration visibility;
    private final int pollBatch;

    TransferOrders(
            DatabaseClient db,
            TransactionalOperator tx,
            NodeAgents agents,
            Leases leases,
            LongPoll longPoll,
            JsonMapper json,
            Clock clock,
            @Value("${kvreuse.leases.order-visibility:5s}") Duration visibility,
            @Value("${kvreuse.leases.poll-batch:64}") int pollBatch) {
        this.db = db;
        this.tx = tx;
        this.agents = agents;
        this.leases = leases;
        this.longPoll = longPoll;
        this.json = json;
        this.clock = clock;
        this.visibility = visibility;
        this.pollBatch = Math.max(pollBatch, 1);
    }

    public Mono<List<TransferOrder>> poll(String hostId, Duration wait, ApiPrincipal p) {
        return agents.requireHost(hostId, p)
                .then(longPoll.poll(PgNotifications.ORDERS, hostId, wait, () -> claim(hostId, p.actor())));
    }

    private Mono<LongPoll.Look<TransferOrder>> claim(String hostId, String actor) {
        Instant now = clock.instant();
        return leases.claimOrders(hostId, actor, now, now.minus(visibility), pollBatch)
                .flatMap(claimed -> claimed.isEmpty()
                        ? Mono.just(List.<TransferOrder>of())
                        : parts(claimed.stream().map(ClaimedOrder::orderId).toList())
                                .flatMap(parts -> Flux.fromIterable(claimed)
                                        .concatMap(c -> {
                                            List<TransferOrder.Part> list = parts.getOrDefault(c.orderId(), List.of());
                                            return remoteAgents(c, list)
                                                    .map(remote -> new TransferOrder(
                                                            c.orderId(),
                                                            c.leaseId(),
                                                            c.hostId(),
                                                            c.claims(),
                                                            list,
                                                            remote));
                                        })
                                        .collectList()))
                .as(tx::transactional)
                .map(found -> new LongPoll.Look<>(found, null));
    }

    /**
     * The parts of the orders, by order, in rank order, built from their rows: both ends named by
     * {@link NixlAgentNames}; the source end's runs are the part's, its one registered region its own.
     */
    private Mono<Map<UUID, List<TransferOrder.Part>>> parts(List<UUID> orderIds) {
        return db.sql("""
                        SELECT order_id, rank, slot_runs, bytes, bytes_per_block,
                            source_host_id, source_gpu_ordinal, source_region_ref,
                            destination_host_id, destination_gpu_ordinal, destination_region_ref,
                            destination_slot_runs, destination_regions
                        FROM transfer_part
                        WHERE order_id = ANY(CAST(:o AS UUID[])) ORDER BY order_id, rank
                        """)
                .bind("o", orderIds.stream().map(UUID::toString).toArray(String[]::new))
                .map((r, m) -> Map.entry(r.get("order_id", UUID.class), part(r)))
                .all()
                .collectMultimap(Map.Entry::getKey, Map.Entry::getValue)
                .map(m -> {
                    Map<UUID, List<TransferOrder.Part>> byOrder = new java.util.HashMap<>();
                    m.forEach((k, v) -> byOrder.put(k, List.copyOf(v)));
                    return byOrder;
                });
    }

    private TransferOrder.Part part(io.r2dbc.spi.Readable r) {
        List<List<Integer>> runs = json.readValue(r.get("slot_runs", Json.class).asString(), RUNS);
        long bytesPerBlock = r.get("bytes_per_block", Long.class);
        String sourceHost = r.get("source_host_id", String.class);
        int sourceGpu = r.get("source_gpu_ordinal", Integer.class);
        String sourceRegion = r.get("source_region_ref", String.class);
        String targetHost = r.get("destination_host_id", String.class);
        int targetGpu = r.get("destination_gpu_ordinal", Integer.class);
        String targetRegion = r.get("destination_region_ref", String.class);
        return new TransferOrder.Part(
                r.get("rank", Integer.class),
                new TransferOrder.Endpoint(
                        sourceHost,
                        sourceGpu,
                        NixlAgentNames.of(sourceHost, sourceGpu),
                        sourceRegion,
                        runs,
                        bytesPerBlock,
                        List.of(sourceRegion)),
                new TransferOrder.Endpoint(
                        targetHost,
                        targetGpu,
                        NixlAgentNames.of(targetHost, targetGpu),
                        targetRegion,
                        json.readValue(
                                r.get("destination_slot_runs", Json.class).asString(), RUNS),
                        bytesPerBlock,
                        List.of(r.get("destination_regions", String[].class))),
                runs,
                r.get("bytes", Long.class));
    }

    private Mono<List<TransferOrder.RemoteAgent>> remoteAgents(ClaimedOrder c, List<TransferOrder.Part> parts) {
        if (c.donorHost().equals(c.hostId())) {
            return Mono.just(List.of());
        }
        Integer[] ordinals = parts.stream().map(p -> p.source().gpuOrdinal()).toArray(Integer[]::new);
        return db.sql("""
                        SELECT gpu_ordinal, agent_name, metadata FROM nixl_agent_metadata
                        WHERE host_id = :h AND gpu_ordinal = ANY(:o) ORDER BY gpu_ordinal
                        """)
                .bind("h", c.donorHost())
                .bind("o", ordinals)
                .map((r, m) -> {
                    java.nio.ByteBuffer b = r.get("metadata", java.nio.ByteBuffer.class);
                    byte[] bytes = new byte[b.remaining()];
                    b.get(bytes);
                    return new TransferOrder.RemoteAgent(
                            c.donorHost(),
                            r.get("gpu_ordinal", Integer.class),
                            r.get("agent_name", String.class),
                            Base64.getEncoder().encodeToString(bytes));
                })
                .all()
                .collectList();
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
                                .map(state -> new PartReport.Ack(orderId, rank, req.state(), state.name()))
                                .as(tx::transactional);
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
                                        : leases.partsReported(fast, p.actor()).as(tx::transactional))
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
