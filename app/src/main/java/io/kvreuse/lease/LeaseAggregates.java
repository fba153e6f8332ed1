package io.kvreuse.lease;

import io.kvreuse.lease.LeaseAggregate.Command;
import io.kvreuse.lease.LeaseAggregate.CommandState;
import io.kvreuse.lease.LeaseAggregate.CommandType;
import io.kvreuse.lease.LeaseAggregate.Destination;
import io.kvreuse.lease.LeaseAggregate.HoldState;
import io.kvreuse.lease.LeaseAggregate.Order;
import io.kvreuse.lease.LeaseAggregate.OrderState;
import io.kvreuse.lease.LeaseAggregate.Part;
import io.kvreuse.lease.LeaseAggregate.Pin;
import io.kvreuse.protocol.PartState;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.stream.Collectors;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.stereotype.Repository;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Reads leases as the decider sees them: locks the lease rows in id order, then reads every
 * lease's pins, destinations, commands, order parts and parties with one statement each for the
 * whole set. Call inside the transaction that will write the decisions.
 */
@Repository
class LeaseAggregates {

    private final DatabaseClient db;
    private final BatchStore store;
    private final LeaseStore leases;

    LeaseAggregates(DatabaseClient db, BatchStore store, LeaseStore leases) {
        this.db = db;
        this.store = store;
        this.leases = leases;
    }

    /** The locked leases by id, in id order; an unknown id is left out. */
    Mono<Map<UUID, LeaseAggregate>> lock(Collection<UUID> leaseIds) {
        if (leaseIds.isEmpty()) {
            return Mono.just(Map.of());
        }
        return store.lock(leaseIds).collectList().flatMap(rows -> rows.isEmpty() ? Mono.just(Map.of()) : read(rows));
    }

    private Mono<Map<UUID, LeaseAggregate>> read(List<LeaseRow> rows) {
        List<UUID> ids = rows.stream().map(LeaseRow::leaseId).toList();
        Set<UUID> parties = new HashSet<>();
        rows.forEach(r -> {
            parties.add(r.donorId());
            parties.add(r.targetId());
        });
        Set<UUID> banks = rows.stream().map(LeaseRow::bankId).collect(Collectors.toSet());
        return Mono.zip(
                        pins(ids),
                        destinations(ids),
                        commands(ids),
                        orders(ids),
                        store.epochs(parties),
                        store.banksForPin(banks),
                        tps(rows))
                .map(t -> {
                    Map<UUID, LeaseAggregate> out = new LinkedHashMap<>();
                    for (LeaseRow row : rows) {
                        LeaseStore.BankNow bank = t.getT6().get(row.bankId());
                        Order order = t.getT4().get(row.leaseId());
                        out.put(
                                row.leaseId(),
                                new LeaseAggregate(
                                        row,
                                        t.getT7().get(row.domainId()),
                                        t.getT1().getOrDefault(row.leaseId(), List.of()),
                                        t.getT2().getOrDefault(row.leaseId(), List.of()),
                                        t.getT3().getOrDefault(row.leaseId(), List.of()),
                                        order,
                                        parties(row, t.getT5(), bank, order)));
                    }
                    return out;
                });
    }

    private Mono<Map<UUID, List<Pin>>> pins(List<UUID> ids) {
        return store.pins(ids)
                .collect(Collectors.groupingBy(
                        BatchStore.LeasePin::leaseId, Collectors.mapping(p -> pin(p.pin()), Collectors.toList())));
    }

    private Mono<Map<UUID, List<Destination>>> destinations(List<UUID> ids) {
        return store.destinations(ids)
                .collect(Collectors.groupingBy(
                        BatchStore.LeaseDestination::leaseId,
                        Collectors.mapping(d -> destination(d.destination()), Collectors.toList())));
    }

    private static LeaseAggregate.Parties parties(
            LeaseRow row, Map<UUID, Long> epochs, LeaseStore.BankNow bank, Order order) {
        long partBytes = order == null || order.parts().isEmpty()
                ? 0
                : order.parts().values().iterator().next().bytes();
        return new LeaseAggregate.Parties(
                epochs.getOrDefault(row.donorId(), -1L),
                epochs.getOrDefault(row.targetId(), -1L),
                bank == null ? -1 : bank.epoch(),
                bank == null || bank.state().equals("DROPPED"),
                partBytes);
    }

    private static Pin pin(HoldStore.Pin p) {
        return new Pin(p.rank(), HoldState.valueOf(p.state()));
    }

    private static Destination destination(HoldStore.Destination d) {
        return new Destination(d.rank(), d.regionRef(), d.runs(), HoldState.valueOf(d.state()));
    }

    private Mono<Map<UUID, List<Command>>> commands(List<UUID> ids) {
        return db.sql(
                        "SELECT command_id, incarnation_id, lease_id, type, rank, acked_at IS NULL AS open, ok"
                                + " FROM engine_command WHERE lease_id = ANY(CAST(:ids AS UUID[])) ORDER BY command_id FOR UPDATE")
                .bind("ids", BatchStore.ids(ids))
                .map((r, m) -> Map.entry(
                        r.get("lease_id", UUID.class),
                        new Command(
                                r.get("command_id", UUID.class),
                                r.get("incarnation_id", UUID.class),
                                CommandType.valueOf(r.get("type", String.class)),
                                r.get("rank", Integer.class),
                                Boolean.TRUE.equals(r.get("open", Boolean.class))
                                        ? CommandState.OPEN
                                        : Boolean.TRUE.equals(r.get("ok", Boolean.class))
                                                ? CommandState.ACKED
                                                : CommandState.REFUSED)))
                .all()
                .collect(Collectors.groupingBy(
                        Map.Entry::getKey, Collectors.mapping(Map.Entry::getValue, Collectors.toList())));
    }

    /** Each lease's order with its parts (the parts locked). */
    private Mono<Map<UUID, Order>> orders(List<UUID> ids) {
        return db.sql("""
                        SELECT o.lease_id, o.order_id, o.state AS order_state, p.rank, p.state, p.bytes, p.bytes_moved,
                            COALESCE(p.duration_us, 0) AS duration_us
                        FROM transfer_order o JOIN transfer_part p ON p.order_id = o.order_id
                        WHERE o.lease_id = ANY(CAST(:l AS UUID[]))
                        ORDER BY p.order_id, p.rank FOR UPDATE OF p
                        """)
                .bind("l", BatchStore.ids(ids))
                .map((r, m) -> new PartRow(
                        r.get("lease_id", UUID.class),
                        r.get("order_id", UUID.class),
                        OrderState.valueOf(r.get("order_state", String.class)),
                        new Part(
                                r.get("rank", Integer.class),
                                PartState.valueOf(r.get("state", String.class)),
                                r.get("bytes", Long.class),
                                r.get("bytes_moved", Long.class),
                                r.get("duration_us", Long.class))))
                .all()
                .collectList()
                .map(LeaseAggregates::byLease);
    }

    private record PartRow(UUID leaseId, UUID orderId, OrderState orderState, Part part) {}

    private static Map<UUID, Order> byLease(List<PartRow> rows) {
        Map<UUID, Map<Integer, Part>> parts = new HashMap<>();
        Map<UUID, PartRow> first = new LinkedHashMap<>();
        for (PartRow row : rows) {
            parts.computeIfAbsent(row.leaseId(), k -> new HashMap<>())
                    .put(row.part().rank(), row.part());
            first.putIfAbsent(row.leaseId(), row);
        }
        Map<UUID, Order> orders = new HashMap<>();
        first.forEach((lease, row) -> orders.put(lease, new Order(row.orderId(), row.orderState(), parts.get(lease))));
        return orders;
    }

    private Mono<Map<String, Integer>> tps(List<LeaseRow> rows) {
        return Flux.fromIterable(rows.stream().map(LeaseRow::domainId).collect(Collectors.toSet()))
                .concatMap(d -> leases.tp(d).map(tp -> Map.entry(d, tp)))
                .collectMap(Map.Entry::getKey, Map.Entry::getValue);
    }
}
