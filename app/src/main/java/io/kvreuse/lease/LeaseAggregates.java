package io.kvreuse.lease;

import io.kvreuse.store.ArrayLiteral;
import io.r2dbc.postgresql.codec.Json;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.UnaryOperator;
import org.jspecify.annotations.Nullable;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.stereotype.Repository;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;

/**
 * Reads leases as the decider sees them: each lease's row with its pins, destinations, commands,
 * order parts and parties as one JSON object ({@code kvreuse_lease_aggregates}, V97), in one
 * statement for the whole set. Views read it as is; {@link #lock} locks the lease rows in id order
 * ({@code FOR UPDATE}), share-locks their banks, so a reset or eviction waits for the batch, and
 * reads them, in one call ({@code kvreuse_lock_lease_aggregates}) whose read takes its snapshot after
 * the locks were granted and so sees what a batch that held them committed (call it inside the
 * transaction that will write the decisions).
 */
@Repository
class LeaseAggregates {

    /**
     * Locks and reads the leases {@code :ids} names and those of the commands {@code :cmds} of
     * incarnations {@code :incs}, and has the rest of the transaction run its prepared statements on
     * their generic plans: with array parameters PostgreSQL otherwise plans the write again at every
     * execution, which took several times as long as running it. The rest of the transaction also
     * joins in the order its statements are written (each starts from the batch's leases or arrays):
     * searching the join orders of a write that queues orders took ten times as long as planning it.
     */
    private static final String LOCK = """
            SELECT a.read FROM kvreuse_lock_lease_aggregates(CAST(:ids AS UUID[]), CAST(:cmds AS UUID[]),
                CAST(:incs AS UUID[])) AS a ORDER BY a.lease_id""";

    /** The leases on either side of incarnation {@code :i} that are not finished, in id order (the lock order). */
    static final String UNFINISHED = """
            SELECT a.read FROM kvreuse_lease_aggregates(ARRAY(
                SELECT l.lease_id FROM lease l
                WHERE (l.donor_incarnation_id = :i OR l.target_incarnation_id = :i) AND l.state NOT IN ('RELEASED', 'EXPIRED')
            )) AS a ORDER BY a.lease_id""";

    private final DatabaseClient db;
    private final JsonMapper json;

    LeaseAggregates(DatabaseClient db, JsonMapper json) {
        this.db = db;
        this.json = json;
    }

    /** Lease, command or incarnation ids as one {@code UUID[]} parameter. */
    static ArrayLiteral.PgArray ids(Collection<UUID> ids) {
        ArrayLiteral a = new ArrayLiteral(ArrayLiteral.Type.UUID, ids.size(), 36);
        ids.forEach(a::add);
        return a.build();
    }

    /** The leases {@code query} (a statement answering {@code read}, bound by {@code bind}) selects, as they are. */
    Flux<LeaseAggregate> read(String query, UnaryOperator<DatabaseClient.GenericExecuteSpec> bind) {
        return bind.apply(db.sql(query))
                .map((r, m) -> aggregate(r.get("read", Json.class)))
                .all();
    }

    private LeaseAggregate aggregate(@Nullable Json read) {
        return json.readValue(java.util.Objects.requireNonNull(read, "read").asArray(), LeaseAggregate.class);
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
        return read(
                        LOCK,
                        s -> s.bind("ids", ids(leaseIds))
                                .bind(
                                        "cmds",
                                        ids(commands.stream()
                                                .map(Map.Entry::getKey)
                                                .toList()))
                                .bind(
                                        "incs",
                                        ids(commands.stream()
                                                .map(Map.Entry::getValue)
                                                .toList())))
                .collectMap(a -> a.row().leaseId(), a -> a, LinkedHashMap::new);
    }
}
