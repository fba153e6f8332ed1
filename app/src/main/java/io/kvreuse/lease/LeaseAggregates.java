package io.kvreuse.lease;

import io.kvreuse.lease.LeaseAggregate.Command;
import io.kvreuse.lease.LeaseAggregate.Destination;
import io.kvreuse.lease.LeaseAggregate.Order;
import io.kvreuse.lease.LeaseAggregate.Parties;
import io.kvreuse.lease.LeaseAggregate.Pin;
import io.r2dbc.postgresql.codec.Json;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.jspecify.annotations.Nullable;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.stereotype.Repository;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;

/**
 * Reads leases as the decider sees them, in two statements for the whole set: the first locks the
 * lease rows in id order ({@code FOR UPDATE}) and share-locks their banks, so a reset or eviction
 * waits for the batch; the second, whose snapshot is taken after the locks were granted and so sees
 * what a batch that held them committed, reads each lease's row with its pins, destinations,
 * commands, order parts and parties as one JSON object. Call inside the transaction that will write
 * the decisions.
 */
@Repository
class LeaseAggregates {

    private static final String LOCK = """
            SELECT l.lease_id FROM lease l JOIN retained_bank b ON b.bank_id = l.bank_id
            WHERE l.lease_id = ANY(CAST(:ids AS UUID[])) ORDER BY l.lease_id FOR UPDATE OF l FOR SHARE OF b
            """;

    /** Each lease's row, and what the decider reads with it as one JSON object in the shape of {@link Read}. */
    private static final String READ = "SELECT " + LeaseRow.COLUMNS + """
            ,
                json_build_object(
                    'tp', (SELECT tp_size FROM layout_domain d WHERE d.domain_id = l.domain_id),
                    'pins', (SELECT json_agg(json_build_object('rank', rank, 'state', state) ORDER BY rank)
                        FROM lease_source_pin WHERE lease_id = l.lease_id),
                    'destinations', (SELECT json_agg(json_build_object('rank', rank, 'regionRef', region_ref,
                            'runs', slot_runs, 'state', state) ORDER BY rank)
                        FROM lease_destination WHERE lease_id = l.lease_id),
                    'commands', (SELECT json_agg(json_build_object('commandId', command_id, 'incarnationId', incarnation_id,
                            'type', type, 'rank', rank,
                            'state', CASE WHEN acked_at IS NULL THEN 'OPEN' WHEN ok THEN 'ACKED' ELSE 'REFUSED' END)
                            ORDER BY command_id)
                        FROM engine_command WHERE lease_id = l.lease_id),
                    'order', (SELECT json_build_object('orderId', o.order_id, 'state', o.state,
                            'parts', json_object_agg(rank, json_build_object('rank', rank, 'state', state, 'bytes', bytes,
                                'bytesMoved', bytes_moved, 'durationUs', COALESCE(duration_us, 0))))
                        FROM transfer_part WHERE order_id = o.order_id HAVING count(*) > 0),
                    'parties', json_build_object(
                        'donorEpoch', COALESCE((SELECT fencing_epoch FROM engine_incarnation
                            WHERE incarnation_id = l.donor_incarnation_id), -1),
                        'targetEpoch', COALESCE((SELECT fencing_epoch FROM engine_incarnation
                            WHERE incarnation_id = l.target_incarnation_id), -1),
                        'bankEpoch', b.bank_epoch, 'bankDropped', b.state = 'DROPPED',
                        'partBytes', COALESCE((SELECT min(bytes) FROM transfer_part WHERE order_id = o.order_id), 0))) AS read
            FROM lease l JOIN retained_bank b ON b.bank_id = l.bank_id LEFT JOIN transfer_order o ON o.lease_id = l.lease_id
            WHERE l.lease_id = ANY(CAST(:ids AS UUID[])) ORDER BY l.lease_id
            """;

    /** What a lease's aggregate holds besides its row (an order without parts reads as none). */
    private record Read(
            int tp,
            @Nullable List<Pin> pins,
            @Nullable List<Destination> destinations,
            @Nullable List<Command> commands,
            @Nullable Order order,
            Parties parties) {

        LeaseAggregate with(LeaseRow row) {
            return new LeaseAggregate(row, tp, list(pins), list(destinations), list(commands), order, parties);
        }

        private static <T> List<T> list(@Nullable List<T> values) {
            return values == null ? List.of() : values;
        }
    }

    private final DatabaseClient db;
    private final JsonMapper json;

    LeaseAggregates(DatabaseClient db, JsonMapper json) {
        this.db = db;
        this.json = json;
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
                                .map((r, m) -> json.readValue(
                                                r.get("read", Json.class).asArray(), Read.class)
                                        .with(LeaseRow.of(r)))
                                .all()
                                .collectMap(a -> a.row().leaseId(), a -> a, LinkedHashMap::new));
    }
}
