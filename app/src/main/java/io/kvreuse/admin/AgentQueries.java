package io.kvreuse.admin;

import io.r2dbc.postgresql.codec.Json;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;

/**
 * Read-only queries behind the node-agents pages: hosts with their GPUs, the names of their NIXL
 * agents (never the metadata, which holds raw addresses), liveness, and the orders each host has
 * in flight. Every read is by host or bounded by a limit; in-flight orders come from a partial index.
 */
@Component
class AgentQueries {

    static final List<String> STATES = List.of("ONLINE", "SUSPECT", "OFFLINE");
    static final List<String> IN_FLIGHT = List.of("QUEUED", "CLAIMED", "UNCERTAIN");

    static final String IN_FLIGHT_SQL = """
            SELECT host_id, state, count(*) AS n FROM transfer_order
            WHERE host_id = ANY(CAST(:hosts AS TEXT[])) AND state IN ('QUEUED', 'CLAIMED', 'UNCERTAIN')
            GROUP BY host_id, state
            """;

    static final String ORDERS_SQL = """
            SELECT order_id, lease_id, state, created_at, claimed_at, deadline, claims FROM transfer_order
            WHERE host_id = :h AND state IN ('QUEUED', 'CLAIMED', 'UNCERTAIN')
            ORDER BY created_at LIMIT :limit
            """;

    private final DatabaseClient db;
    private final JsonMapper json;

    AgentQueries(DatabaseClient db, JsonMapper json) {
        this.db = db;
        this.json = json;
    }

    /** Agents, most recently heard first; optionally one state or one host. */
    Mono<List<AgentRow>> list(@Nullable String state, @Nullable String hostId, int limit) {
        return db.sql("""
                        SELECT host_id, owner_subject, gpus, state, registered_at, last_heartbeat_at, agent_epoch, heartbeats
                        FROM node_agent
                        WHERE (CAST(:state AS TEXT) IS NULL OR state = :state)
                          AND (CAST(:host AS TEXT) IS NULL OR host_id = :host)
                        ORDER BY last_heartbeat_at DESC, host_id LIMIT :limit
                        """)
                .bind("state", io.kvreuse.store.Sql.orNull(state, String.class))
                .bind("host", io.kvreuse.store.Sql.orNull(hostId, String.class))
                .bind("limit", limit)
                .map((r, m) -> new Base(
                        r.get("host_id", String.class),
                        r.get("owner_subject", String.class),
                        gpus(r.get("gpus", Json.class)),
                        r.get("state", String.class),
                        r.get("registered_at", OffsetDateTime.class).toInstant(),
                        r.get("last_heartbeat_at", OffsetDateTime.class).toInstant(),
                        r.get("agent_epoch", Long.class),
                        r.get("heartbeats", Long.class)))
                .all()
                .collectList()
                .flatMap(this::complete);
    }

    private Mono<List<AgentRow>> complete(List<Base> agents) {
        if (agents.isEmpty()) {
            return Mono.just(List.of());
        }
        String[] hosts = agents.stream().map(Base::hostId).toArray(String[]::new);
        Mono<Map<String, List<NixlName>>> names = db.sql("""
                        SELECT host_id, gpu_ordinal, agent_name FROM nixl_agent_metadata
                        WHERE host_id = ANY(CAST(:hosts AS TEXT[])) ORDER BY host_id, gpu_ordinal
                        """)
                .bind("hosts", hosts)
                .map((r, m) -> Map.entry(
                        r.get("host_id", String.class),
                        new NixlName(r.get("gpu_ordinal", Integer.class), r.get("agent_name", String.class))))
                .all()
                .collect(Collectors.groupingBy(
                        Map.Entry::getKey, Collectors.mapping(Map.Entry::getValue, Collectors.toList())));
        Mono<Map<String, Map<String, Long>>> orders = db.sql(IN_FLIGHT_SQL)
                .bind("hosts", hosts)
                .map((r, m) -> new Object[] {
                    r.get("host_id", String.class), r.get("state", String.class), r.get("n", Long.class)
                })
                .all()
                .collect(Collectors.groupingBy(
                        o -> (String) o[0], Collectors.toMap(o -> (String) o[1], o -> (Long) o[2])));
        return Mono.zip(names, orders)
                .map(t -> agents.stream()
                        .map(a -> a.with(
                                t.getT1().getOrDefault(a.hostId(), List.of()),
                                t.getT2().getOrDefault(a.hostId(), Map.of())))
                        .toList());
    }

    Mono<AgentRow> find(String hostId) {
        return list(null, hostId, 1).flatMap(l -> Mono.justOrEmpty(l.stream().findFirst()));
    }

    /** The host's orders in flight, oldest first. */
    Flux<OrderRow> ordersInFlight(String hostId, int limit) {
        return db.sql(ORDERS_SQL)
                .bind("h", hostId)
                .bind("limit", limit)
                .map((r, m) -> new OrderRow(
                        r.get("order_id", UUID.class),
                        r.get("lease_id", UUID.class),
                        r.get("state", String.class),
                        r.get("created_at", OffsetDateTime.class).toInstant(),
                        toInstant(r.get("claimed_at", OffsetDateTime.class)),
                        r.get("deadline", OffsetDateTime.class).toInstant(),
                        r.get("claims", Integer.class)))
                .all();
    }

    private List<Gpu> gpus(@Nullable Json value) {
        return value == null ? List.of() : List.of(json.readValue(value.asString(), Gpu[].class));
    }

    private static @Nullable Instant toInstant(@Nullable OffsetDateTime t) {
        return t == null ? null : t.toInstant();
    }

    record Gpu(int ordinal, String uuid) {}

    record NixlName(int gpuOrdinal, String name) {}

    private record Base(
            String hostId,
            String owner,
            List<Gpu> gpus,
            String state,
            Instant registeredAt,
            Instant lastHeartbeatAt,
            long agentEpoch,
            long heartbeats) {
        AgentRow with(List<NixlName> nixl, Map<String, Long> inFlight) {
            return new AgentRow(
                    hostId, owner, gpus, nixl, state, registeredAt, lastHeartbeatAt, agentEpoch, heartbeats, inFlight);
        }
    }

    /** One node agent as its pages show it. */
    record AgentRow(
            String hostId,
            String owner,
            List<Gpu> gpus,
            List<NixlName> nixlAgents,
            String state,
            Instant registeredAt,
            Instant lastHeartbeatAt,
            long agentEpoch,
            long heartbeats,
            Map<String, Long> inFlight) {

        public long ordersInFlight() {
            return inFlight.values().stream().mapToLong(Long::longValue).sum();
        }

        public long inFlight(String state) {
            return inFlight.getOrDefault(state, 0L);
        }

        /** The NIXL agent name of a GPU, or null when the host registered none for it. */
        public @Nullable String nixlName(int ordinal) {
            return nixlAgents.stream()
                    .filter(n -> n.gpuOrdinal() == ordinal)
                    .map(NixlName::name)
                    .findFirst()
                    .orElse(null);
        }
    }

    record OrderRow(
            UUID orderId,
            UUID leaseId,
            String state,
            Instant createdAt,
            @Nullable Instant claimedAt,
            Instant deadline,
            int claims) {}
}
