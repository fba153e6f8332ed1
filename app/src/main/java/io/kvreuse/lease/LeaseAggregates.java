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
import io.r2dbc.spi.Readable;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.stereotype.Repository;
import reactor.core.publisher.Mono;

/**
 * Reads leases as the decider sees them, in two statements for the whole set: the first locks the
 * lease rows in id order ({@code FOR UPDATE}) and share-locks their banks, so a reset or eviction
 * waits for the batch; the second, whose snapshot is taken after the locks were granted and so sees
 * what a batch that held them committed, reads each lease with its pins, destinations, commands,
 * order parts and parties as array columns of one row. Call inside the transaction that will write
 * the decisions.
 */
@Repository
class LeaseAggregates {

    private static final String LOCK = """
            SELECT l.lease_id FROM lease l JOIN retained_bank b ON b.bank_id = l.bank_id
            WHERE l.lease_id = ANY(CAST(:ids AS UUID[])) ORDER BY l.lease_id FOR UPDATE OF l FOR SHARE OF b
            """;

    private static final String READ = "SELECT " + LeaseRow.COLUMNS + """
            ,
                (SELECT tp_size FROM layout_domain d WHERE d.domain_id = l.domain_id) AS tp,
                (SELECT fencing_epoch FROM engine_incarnation i WHERE i.incarnation_id = l.donor_incarnation_id) AS donor_now,
                (SELECT fencing_epoch FROM engine_incarnation i WHERE i.incarnation_id = l.target_incarnation_id) AS target_now,
                b.bank_epoch AS bank_now, b.state AS bank_state, p.*, d.*, c.*, o.order_id, o.state AS order_state, t.*
            FROM lease l JOIN retained_bank b ON b.bank_id = l.bank_id
            LEFT JOIN transfer_order o ON o.lease_id = l.lease_id
            CROSS JOIN LATERAL (SELECT array_agg(rank ORDER BY rank) AS pin_rank, array_agg(state ORDER BY rank) AS pin_state
                FROM lease_source_pin WHERE lease_id = l.lease_id) p
            CROSS JOIN LATERAL (SELECT array_agg(rank ORDER BY rank) AS dest_rank, array_agg(region_ref ORDER BY rank) AS dest_ref,
                    array_agg(CAST(slot_runs AS TEXT) ORDER BY rank) AS dest_runs, array_agg(state ORDER BY rank) AS dest_state
                FROM lease_destination WHERE lease_id = l.lease_id) d
            CROSS JOIN LATERAL (SELECT array_agg(CAST(command_id AS TEXT) ORDER BY command_id) AS cmd_id,
                    array_agg(CAST(incarnation_id AS TEXT) ORDER BY command_id) AS cmd_inc, array_agg(type ORDER BY command_id) AS cmd_type,
                    array_agg(rank ORDER BY command_id) AS cmd_rank, array_agg(CASE WHEN acked_at IS NULL THEN 'OPEN'
                        WHEN ok THEN 'ACKED' ELSE 'REFUSED' END ORDER BY command_id) AS cmd_state
                FROM engine_command WHERE lease_id = l.lease_id) c
            CROSS JOIN LATERAL (SELECT array_agg(rank ORDER BY rank) AS part_rank, array_agg(state ORDER BY rank) AS part_state,
                    array_agg(bytes ORDER BY rank) AS part_bytes, array_agg(bytes_moved ORDER BY rank) AS part_moved,
                    array_agg(COALESCE(duration_us, 0) ORDER BY rank) AS part_us
                FROM transfer_part WHERE order_id = o.order_id) t
            WHERE l.lease_id = ANY(CAST(:ids AS UUID[])) ORDER BY l.lease_id
            """;

    private final DatabaseClient db;

    LeaseAggregates(DatabaseClient db) {
        this.db = db;
    }

    static String[] ids(Collection<UUID> ids) {
        return ids.stream().map(UUID::toString).toArray(String[]::new);
    }

    /** The locked leases by id, in id order; an unknown id is left out. */
    Mono<Map<UUID, LeaseAggregate>> lock(Collection<UUID> leaseIds) {
        if (leaseIds.isEmpty()) {
            return Mono.just(Map.of());
        }
        String[] ids = ids(leaseIds);
        return db.sql(LOCK)
                .bind("ids", ids)
                .map((r, m) -> 1)
                .all()
                .count()
                .flatMap(n -> n == 0
                        ? Mono.just(Map.of())
                        : db.sql(READ)
                                .bind("ids", ids)
                                .map((r, m) -> aggregate(r))
                                .all()
                                .collectMap(a -> a.row().leaseId(), a -> a, LinkedHashMap::new));
    }

    private static LeaseAggregate aggregate(Readable r) {
        LeaseRow row = LeaseRow.of(r);
        Order order = order(r);
        Long donor = r.get("donor_now", Long.class);
        Long target = r.get("target_now", Long.class);
        long partBytes =
                order == null ? 0 : order.parts().values().iterator().next().bytes();
        return new LeaseAggregate(
                row,
                r.get("tp", Integer.class),
                pins(r),
                destinations(r),
                commands(r),
                order,
                new LeaseAggregate.Parties(
                        donor == null ? -1 : donor,
                        target == null ? -1 : target,
                        r.get("bank_now", Long.class),
                        "DROPPED".equals(r.get("bank_state", String.class)),
                        partBytes));
    }

    private static <T> T[] array(Readable r, String column, Class<T[]> type) {
        T[] values = r.get(column, type);
        return values == null ? type.cast(java.lang.reflect.Array.newInstance(type.getComponentType(), 0)) : values;
    }

    private static List<Pin> pins(Readable r) {
        Integer[] rank = array(r, "pin_rank", Integer[].class);
        String[] state = array(r, "pin_state", String[].class);
        List<Pin> pins = new ArrayList<>(rank.length);
        for (int i = 0; i < rank.length; i++) {
            pins.add(new Pin(rank[i], HoldState.valueOf(state[i])));
        }
        return pins;
    }

    private static List<Destination> destinations(Readable r) {
        Integer[] rank = array(r, "dest_rank", Integer[].class);
        String[] ref = array(r, "dest_ref", String[].class);
        String[] runs = array(r, "dest_runs", String[].class);
        String[] state = array(r, "dest_state", String[].class);
        List<Destination> out = new ArrayList<>(rank.length);
        for (int i = 0; i < rank.length; i++) {
            out.add(new Destination(rank[i], ref[i], SlotRuns.parse(runs[i]), HoldState.valueOf(state[i])));
        }
        return out;
    }

    private static List<Command> commands(Readable r) {
        String[] id = array(r, "cmd_id", String[].class);
        String[] inc = array(r, "cmd_inc", String[].class);
        String[] type = array(r, "cmd_type", String[].class);
        Integer[] rank = array(r, "cmd_rank", Integer[].class);
        String[] state = array(r, "cmd_state", String[].class);
        List<Command> out = new ArrayList<>(id.length);
        for (int i = 0; i < id.length; i++) {
            out.add(new Command(
                    UUID.fromString(id[i]),
                    UUID.fromString(inc[i]),
                    CommandType.valueOf(type[i]),
                    rank[i],
                    CommandState.valueOf(state[i])));
        }
        return out;
    }

    /** The lease's order with its parts by rank; an order without parts reads as none. */
    private static Order order(Readable r) {
        Integer[] rank = array(r, "part_rank", Integer[].class);
        if (rank.length == 0) {
            return null;
        }
        String[] state = array(r, "part_state", String[].class);
        Long[] bytes = array(r, "part_bytes", Long[].class);
        Long[] moved = array(r, "part_moved", Long[].class);
        Long[] us = array(r, "part_us", Long[].class);
        Map<Integer, Part> parts = new TreeMap<>();
        for (int i = 0; i < rank.length; i++) {
            parts.put(rank[i], new Part(rank[i], PartState.valueOf(state[i]), bytes[i], moved[i], us[i]));
        }
        return new Order(r.get("order_id", UUID.class), OrderState.valueOf(r.get("order_state", String.class)), parts);
    }
}
