package io.kvreuse.lease;

import io.kvreuse.selection.NixlAgentNames;
import io.r2dbc.postgresql.codec.Json;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;

/**
 * The lease side of transfer orders: creates the order when source and destination are both held,
 * and moves it along with the lease. The order goes to the agent on the target's host: it
 * initiates the transfer (a CUDA IPC import on one host, or an MNNVL read from the donor host's
 * agent, whose metadata is attached when the order is handed out).
 */
@Component
class OrderWriter {

    private final DatabaseClient db;
    private final JsonMapper json;

    OrderWriter(DatabaseClient db, JsonMapper json) {
        this.db = db;
        this.json = json;
    }

    private record End(int rank, int gpuOrdinal, String hostId, String regionRef, long bytesPerBlock) {}

    /** One part's state as reported, for the lease's decision. */
    record PartState(int rank, String state, long bytes, long bytesMoved, long durationUs) {}

    Mono<Void> create(LeaseRow lease, List<HoldStore.Destination> dests, Instant now) {
        Mono<List<End>> sources = db.sql("""
                        SELECT r.rank, r.gpu_ordinal, r.host_id, p.region_ref, p.bytes_per_block
                        FROM incarnation_rank r JOIN bank_part p ON p.bank_id = :bank AND p.rank = r.rank
                        WHERE r.incarnation_id = :donor ORDER BY r.rank
                        """)
                .bind("bank", lease.bankId())
                .bind("donor", lease.donorId())
                .map((r, m) -> new End(
                        r.get("rank", Integer.class),
                        r.get("gpu_ordinal", Integer.class),
                        r.get("host_id", String.class),
                        r.get("region_ref", String.class),
                        r.get("bytes_per_block", Long.class)))
                .all()
                .collectList();
        Mono<List<End>> targets = db.sql(
                        "SELECT rank, gpu_ordinal, host_id FROM incarnation_rank WHERE incarnation_id = :t ORDER BY rank")
                .bind("t", lease.targetId())
                .map((r, m) -> new End(
                        r.get("rank", Integer.class),
                        r.get("gpu_ordinal", Integer.class),
                        r.get("host_id", String.class),
                        "",
                        0))
                .all()
                .collectList();
        UUID orderId = UUID.randomUUID();
        return Mono.zip(sources, targets).flatMap(t -> {
            Map<Integer, HoldStore.Destination> byRank =
                    dests.stream().collect(Collectors.toMap(HoldStore.Destination::rank, Function.identity()));
            String initiator = t.getT2().getFirst().hostId();
            Mono<Void> order = db.sql("""
                            INSERT INTO transfer_order (order_id, lease_id, host_id, donor_host_id, state, created_at, deadline)
                            VALUES (:o, :l, :h, :dh, 'QUEUED', :now, :deadline)
                            """)
                    .bind("o", orderId)
                    .bind("l", lease.leaseId())
                    .bind("h", initiator)
                    .bind("dh", t.getT1().getFirst().hostId())
                    .bind("now", LeaseStore.at(now))
                    .bind("deadline", LeaseStore.at(lease.transferDeadline()))
                    .then();
            return order.thenMany(Flux.fromIterable(t.getT1()).concatMap(src -> {
                        End dst = t.getT2().get(src.rank());
                        HoldStore.Destination d = byRank.get(src.rank());
                        return part(orderId, lease, src, dst, d);
                    }))
                    .then();
        });
    }

    private Mono<Void> part(UUID orderId, LeaseRow lease, End src, End dst, HoldStore.Destination d) {
        Map<String, Object> source = end(src, src.regionRef(), lease.sourceRuns(), src.bytesPerBlock());
        Map<String, Object> destination = end(dst, d.regionRef(), d.runs(), src.bytesPerBlock());
        return db.sql("""
                        INSERT INTO transfer_part (order_id, rank, source, destination, slot_runs, bytes, state)
                        VALUES (:o, :rank, :src, :dst, :runs, :bytes, 'QUEUED')
                        """)
                .bind("o", orderId)
                .bind("rank", src.rank())
                .bind("src", Json.of(json.writeValueAsString(source)))
                .bind("dst", Json.of(json.writeValueAsString(destination)))
                .bind("runs", Json.of(SlotRuns.json(lease.sourceRuns())))
                .bind("bytes", lease.fetchBlocks() * src.bytesPerBlock())
                .then();
    }

    private static Map<String, Object> end(End e, String regionRef, int[][] runs, long bytesPerBlock) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("hostId", e.hostId());
        m.put("gpuOrdinal", e.gpuOrdinal());
        m.put("nixlAgent", NixlAgentNames.of(e.hostId(), e.gpuOrdinal()));
        m.put("regionRef", regionRef);
        m.put("slotRuns", SlotRuns.list(runs));
        m.put("bytesPerBlock", bytesPerBlock);
        return m;
    }

    /** A queued order that was never handed out is withdrawn; a claimed one is left to its parts. */
    Mono<Long> cancel(UUID leaseId, Instant now) {
        return db.sql("UPDATE transfer_order SET state = 'FAILED' WHERE lease_id = :l AND state = 'QUEUED'")
                .bind("l", leaseId)
                .fetch()
                .rowsUpdated();
    }

    /** Sets the order's state (DONE, FAILED, UNCERTAIN, QUIESCED) along with its lease. */
    Mono<Void> state(UUID leaseId, String state) {
        return db.sql("UPDATE transfer_order SET state = :s WHERE lease_id = :l")
                .bind("s", state)
                .bind("l", leaseId)
                .then();
    }

    Flux<PartState> parts(UUID leaseId) {
        return db.sql("""
                        SELECT p.rank, p.state, p.bytes, p.bytes_moved, COALESCE(p.duration_us, 0) AS duration_us
                        FROM transfer_part p JOIN transfer_order o ON o.order_id = p.order_id
                        WHERE o.lease_id = :l ORDER BY p.rank
                        """)
                .bind("l", leaseId)
                .map((r, m) -> new PartState(
                        r.get("rank", Integer.class),
                        r.get("state", String.class),
                        r.get("bytes", Long.class),
                        r.get("bytes_moved", Long.class),
                        r.get("duration_us", Long.class)))
                .all();
    }

    /** Hosts whose agents may report for the lease: the order's initiator and the donor's host. */
    Flux<String> agentHosts(UUID leaseId) {
        return db.sql("SELECT host_id, donor_host_id FROM transfer_order WHERE lease_id = :l")
                .bind("l", leaseId)
                .map((r, m) ->
                        List.of(r.get("host_id", String.class), String.valueOf(r.get("donor_host_id", String.class))))
                .all()
                .flatMapIterable(l -> l);
    }
}
