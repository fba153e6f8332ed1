package io.kvreuse.lease;

import io.r2dbc.postgresql.codec.Json;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.UnaryOperator;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.stereotype.Repository;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;

/**
 * Reads leases as the decider sees them: each lease's row with its pins, destinations, commands,
 * order parts and parties as one JSON object, in one statement for the whole set. Views read it as
 * is; {@link #lock} first locks the lease rows in id order ({@code FOR UPDATE}) and share-locks their
 * banks, so a reset or eviction waits for the batch, and then reads in a second statement, whose
 * snapshot is taken after the locks were granted and so sees what a batch that held them committed
 * (call it inside the transaction that will write the decisions).
 */
@Repository
class LeaseAggregates {

    /**
     * Locks the leases {@code :ids} names and those of the commands {@code :cmds} of incarnations
     * {@code :incs}, and has the rest of the transaction run its prepared statements on their generic
     * plans: with array parameters PostgreSQL otherwise plans the read and the write again at every
     * execution, which took several times as long as running them. The rest of the transaction also
     * joins in the order its statements are written (each starts from the batch's leases or arrays):
     * searching the join orders of a write that queues orders took ten times as long as planning it.
     */
    private static final String LOCK = """
            SELECT l.lease_id, set_config('plan_cache_mode', 'force_generic_plan', true),
                set_config('join_collapse_limit', '1', true)
            FROM lease l JOIN retained_bank b ON b.bank_id = l.bank_id
            WHERE l.lease_id = ANY(CAST(:ids AS UUID[]) || ARRAY(
                SELECT c.lease_id FROM engine_command c
                JOIN unnest(CAST(:cmds AS UUID[]), CAST(:incs AS UUID[])) AS m(id, inc)
                    ON c.command_id = m.id AND c.incarnation_id = m.inc))
            ORDER BY l.lease_id FOR UPDATE OF l FOR SHARE OF b
            """;

    /** Each lease as one JSON object in the shape of {@link LeaseAggregate}; an order without parts reads as none. */
    private static final String READ = "SELECT json_build_object('row', " + LeaseRow.JSON + """
            ,
                'tp', (SELECT tp_size FROM layout_domain d WHERE d.domain_id = l.domain_id),
                'pins', COALESCE((SELECT json_agg(json_build_object('rank', rank, 'state', state) ORDER BY rank)
                    FROM lease_source_pin WHERE lease_id = l.lease_id), '[]'),
                'destinations', COALESCE((SELECT json_agg(json_build_object('rank', rank, 'regionRef', region_ref,
                        'runs', slot_runs, 'state', state) ORDER BY rank)
                    FROM lease_destination WHERE lease_id = l.lease_id), '[]'),
                'commands', COALESCE((SELECT json_agg(json_build_object('commandId', command_id,
                        'incarnationId', incarnation_id, 'type', type, 'rank', rank,
                        'state', CASE WHEN acked_at IS NULL THEN 'OPEN' WHEN ok THEN 'ACKED' ELSE 'REFUSED' END))
                    FROM engine_command WHERE lease_id = l.lease_id), '[]'),
                'order', (SELECT json_build_object('orderId', o.order_id, 'state', o.state,
                        'parts', json_object_agg(rank, json_build_object('rank', rank, 'state', state, 'bytes', bytes,
                            'bytesMoved', bytes_moved, 'durationUs', COALESCE(duration_us, 0))))
                    FROM transfer_part WHERE order_id = o.order_id HAVING count(*) > 0),
                'parties', json_build_object(
                    'donorEpoch', COALESCE(di.fencing_epoch, -1), 'targetEpoch', COALESCE(ti.fencing_epoch, -1),
                    'bankEpoch', b.bank_epoch, 'bankDropped', b.state = 'DROPPED',
                    'partBytes', COALESCE((SELECT min(bytes) FROM transfer_part WHERE order_id = o.order_id), 0),
                    'donorOwner', di.owner_subject, 'targetOwner', ti.owner_subject)) AS read
            FROM lease l JOIN retained_bank b ON b.bank_id = l.bank_id LEFT JOIN transfer_order o ON o.lease_id = l.lease_id
            LEFT JOIN engine_incarnation di ON di.incarnation_id = l.donor_incarnation_id
            LEFT JOIN engine_incarnation ti ON ti.incarnation_id = l.target_incarnation_id
            """;

    static final String BY_IDS = "WHERE l.lease_id = ANY(CAST(:ids AS UUID[])) ORDER BY l.lease_id";

    /** The leases on either side of incarnation {@code :i} that are not finished, in id order (the lock order). */
    static final String UNFINISHED = """
            WHERE (l.donor_incarnation_id = :i OR l.target_incarnation_id = :i) AND l.state NOT IN ('RELEASED', 'EXPIRED')
            ORDER BY l.lease_id""";

    private final DatabaseClient db;
    private final JsonMapper json;

    LeaseAggregates(DatabaseClient db, JsonMapper json) {
        this.db = db;
        this.json = json;
    }

    static String[] ids(Collection<UUID> ids) {
        return ids.stream().map(UUID::toString).toArray(String[]::new);
    }

    /** The leases {@code where} (a clause on lease {@code l}, bound by {@code bind}) selects, as they are. */
    Flux<LeaseAggregate> read(String where, UnaryOperator<DatabaseClient.GenericExecuteSpec> bind) {
        return bind.apply(db.sql(READ + where))
                .map((r, m) -> json.readValue(r.get("read", Json.class).asArray(), LeaseAggregate.class))
                .all();
    }

    /**
     * The locked leases by id, in id order: those {@code leaseIds} names and those of the commands
     * {@code commands} names (command id to incarnation id; another incarnation's command locks
     * nothing); an unknown id is left out.
     */
    Mono<Map<UUID, LeaseAggregate>> lock(Collection<UUID> leaseIds, List<Map.Entry<UUID, UUID>> commands) {
        if (leaseIds.isEmpty() && commands.isEmpty()) {
            return Mono.just(Map.of());
        }
        return db.sql(LOCK)
                .bind("ids", ids(leaseIds))
                .bind("cmds", ids(commands.stream().map(Map.Entry::getKey).toList()))
                .bind("incs", ids(commands.stream().map(Map.Entry::getValue).toList()))
                .map((r, m) -> r.get("lease_id", UUID.class))
                .all()
                .collectList()
                .flatMap(locked -> locked.isEmpty()
                        ? Mono.just(Map.<UUID, LeaseAggregate>of())
                        : read(BY_IDS, s -> s.bind("ids", ids(locked)))
                                .collectMap(a -> a.row().leaseId(), a -> a, LinkedHashMap::new));
    }
}
