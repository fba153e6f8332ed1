package io.kvreuse.orders;

import io.kvreuse.lease.ClaimedOrder;
import io.kvreuse.lease.Leases;
import io.kvreuse.protocol.NixlAgentNames;
import io.kvreuse.protocol.TransferOrder;
import io.kvreuse.security.ApiPrincipal;
import io.kvreuse.store.LongPoll;
import io.kvreuse.store.PgNotifications;
import io.r2dbc.postgresql.codec.Json;
import java.nio.ByteBuffer;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.stereotype.Service;
import org.springframework.transaction.reactive.TransactionalOperator;
import reactor.core.publisher.Mono;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.json.JsonMapper;

/**
 * The agent's order long poll. Orders are claimed with {@code FOR UPDATE SKIP LOCKED}, so two
 * pollers — on one replica or two — never receive the same order; a claimed order that no part
 * report acknowledged within the visibility timeout ({@code kvreuse.leases.order-visibility},
 * default 5 s) is handed out again, to cover an agent that died between claim and first report.
 * One transaction claims the orders (moving their SOURCE_PINNED leases to TRANSFERRING) and reads
 * their parts with the donor's NIXL agents in one statement; a waiting poll of a host this replica
 * knows has nothing due sends no statement (see {@link LongPoll}).
 */
@Service
public class OrderPoll {

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

    OrderPoll(
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

    /** The host's orders, waiting up to {@code wait} for some. */
    public Mono<List<TransferOrder>> poll(String hostId, Duration wait, ApiPrincipal p) {
        return agents.requireHost(hostId, p)
                .then(longPoll.poll(PgNotifications.ORDERS, hostId, wait, () -> claim(hostId, p.actor())));
    }

    private Mono<LongPoll.Look<TransferOrder>> claim(String hostId, String actor) {
        Instant now = clock.instant();
        return leases.claimOrders(hostId, actor, now, now.minus(visibility), pollBatch)
                .flatMap(claimed -> claimed.found().isEmpty()
                        ? Mono.just(new LongPoll.Look<TransferOrder>(List.of(), claimed.quietUntil()))
                        : orders(claimed.found()).map(found -> new LongPoll.Look<>(found, null)))
                .as(tx::transactional);
    }

    /** A part row with the donor's NIXL agent for its source GPU (null on one host, or none registered). */
    private record PartRow(UUID orderId, TransferOrder.Part part, TransferOrder.@Nullable RemoteAgent agent) {}

    /**
     * The claimed orders as the agent gets them: parts in rank order, both ends named by {@link
     * NixlAgentNames}, the source end's runs the part's and its one registered region its own; for
     * an order across hosts, the donor host's agents of the parts' source GPUs, by GPU ordinal.
     */
    private Mono<List<TransferOrder>> orders(List<ClaimedOrder> claimed) {
        return db.sql("""
                        SELECT p.order_id, p.rank, p.slot_runs, p.bytes, p.bytes_per_block,
                            p.source_host_id, p.source_gpu_ordinal, p.source_region_ref,
                            p.destination_host_id, p.destination_gpu_ordinal, p.destination_region_ref,
                            p.destination_slot_runs, p.destination_regions, m.donor, a.agent_name, a.metadata
                        FROM unnest(CAST(:o AS UUID[]), CAST(:d AS TEXT[])) AS m(order_id, donor)
                        JOIN transfer_part p ON p.order_id = m.order_id
                        LEFT JOIN nixl_agent_metadata a ON a.host_id = m.donor AND a.gpu_ordinal = p.source_gpu_ordinal
                        ORDER BY p.order_id, p.rank
                        """)
                .bind("o", claimed.stream().map(c -> c.orderId().toString()).toArray(String[]::new))
                .bind(
                        "d",
                        claimed.stream()
                                .map(c -> c.donorHost().equals(c.hostId()) ? null : c.donorHost())
                                .toArray(String[]::new))
                .map((r, m) -> new PartRow(r.get("order_id", UUID.class), part(r), agent(r)))
                .all()
                .collectList()
                .map(rows -> assemble(claimed, rows));
    }

    private static List<TransferOrder> assemble(List<ClaimedOrder> claimed, List<PartRow> rows) {
        Map<UUID, List<TransferOrder.Part>> parts = new HashMap<>();
        Map<UUID, Map<Integer, TransferOrder.RemoteAgent>> remote = new HashMap<>();
        for (PartRow row : rows) {
            parts.computeIfAbsent(row.orderId(), k -> new ArrayList<>()).add(row.part());
            Map<Integer, TransferOrder.RemoteAgent> byGpu = remote.computeIfAbsent(row.orderId(), k -> new TreeMap<>());
            if (row.agent() != null) {
                byGpu.put(row.agent().gpuOrdinal(), row.agent());
            }
        }
        return claimed.stream()
                .map(c -> new TransferOrder(
                        c.orderId(),
                        c.leaseId(),
                        c.hostId(),
                        c.claims(),
                        List.copyOf(parts.getOrDefault(c.orderId(), List.of())),
                        List.copyOf(remote.getOrDefault(c.orderId(), Map.of()).values())))
                .toList();
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

    private static TransferOrder.@Nullable RemoteAgent agent(io.r2dbc.spi.Readable r) {
        ByteBuffer b = r.get("metadata", ByteBuffer.class);
        if (b == null) {
            return null;
        }
        byte[] bytes = new byte[b.remaining()];
        b.get(bytes);
        return new TransferOrder.RemoteAgent(
                r.get("donor", String.class),
                r.get("source_gpu_ordinal", Integer.class),
                r.get("agent_name", String.class),
                Base64.getEncoder().encodeToString(bytes));
    }
}
