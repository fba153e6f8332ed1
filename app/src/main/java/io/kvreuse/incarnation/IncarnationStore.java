package io.kvreuse.incarnation;

import static io.kvreuse.store.Sql.orNull;

import io.kvreuse.security.ApiPrincipal;
import io.kvreuse.security.Role;
import io.r2dbc.spi.Readable;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.jspecify.annotations.Nullable;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.stereotype.Repository;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/** SQL for incarnations and their ranks. State changes are conditional updates only. */
@Repository
class IncarnationStore {

    private final DatabaseClient db;

    IncarnationStore(DatabaseClient db) {
        this.db = db;
    }

    Mono<IncarnationView> find(UUID id) {
        return db.sql("SELECT * FROM engine_incarnation WHERE incarnation_id = :id")
                .bind("id", id)
                .map(IncarnationStore::toRow)
                .one()
                .flatMap(row ->
                        ranks(List.of(id)).map(RankRow::rank).collectList().map(row::withRanks));
    }

    /**
     * The incarnation if the principal may see it, else empty: visibility is part of the one
     * statement, so an unknown id and another owner's id take the same path and the same time.
     */
    Mono<IncarnationView> findVisible(UUID id, ApiPrincipal p) {
        return db.sql("""
                        SELECT * FROM engine_incarnation
                        WHERE incarnation_id = :id
                          AND (:all OR owner_subject = :owner OR host_id = :ownHost)
                        """)
                .bind("id", id)
                .bind("all", p.role() == Role.OPERATOR)
                .bind("owner", orNull(p.role() == Role.ENGINE ? p.subject() : null, String.class))
                .bind("ownHost", orNull(p.agentHost(), String.class))
                .map(IncarnationStore::toRow)
                .one()
                .flatMap(row ->
                        ranks(List.of(id)).map(RankRow::rank).collectList().map(row::withRanks));
    }

    Mono<IncarnationOwnership> ownership(UUID id) {
        return db.sql(
                        "SELECT owner_subject, host_id, state, fencing_epoch FROM engine_incarnation WHERE incarnation_id = :id")
                .bind("id", id)
                .map((r, m) -> new IncarnationOwnership(
                        id,
                        r.get("owner_subject", String.class),
                        r.get("host_id", String.class),
                        IncarnationState.valueOf(r.get("state", String.class)),
                        r.get("fencing_epoch", Long.class)))
                .one();
    }

    /** Incarnations matching every filter and visible to the principal, newest first. */
    Flux<IncarnationView> list(Filter f, ApiPrincipal p, int limit) {
        return db.sql("""
                        SELECT * FROM engine_incarnation
                        WHERE (CAST(:state AS TEXT) IS NULL OR state = :state)
                          AND (CAST(:role AS TEXT) IS NULL OR role = :role)
                          AND (CAST(:domainId AS TEXT) IS NULL OR domain_id = :domainId)
                          AND (CAST(:hostId AS TEXT) IS NULL OR host_id = :hostId)
                          AND (CAST(:owner AS TEXT) IS NULL OR owner_subject = :owner)
                          AND (CAST(:ownHost AS TEXT) IS NULL OR host_id = :ownHost)
                        ORDER BY registered_at DESC, incarnation_id
                        LIMIT :limit
                        """)
                .bind("state", orNull(f.state() == null ? null : f.state().name(), String.class))
                .bind("role", orNull(f.role() == null ? null : f.role().name(), String.class))
                .bind("domainId", orNull(f.domainId(), String.class))
                .bind("hostId", orNull(f.hostId(), String.class))
                .bind("owner", orNull(p.role() == Role.ENGINE ? p.subject() : null, String.class))
                .bind("ownHost", orNull(p.agentHost(), String.class))
                .bind("limit", limit)
                .map(IncarnationStore::toRow)
                .all()
                .collectList()
                .flatMapMany(rows -> withRanks(rows));
    }

    private Flux<IncarnationView> withRanks(List<Row> rows) {
        if (rows.isEmpty()) {
            return Flux.empty();
        }
        return ranks(rows.stream().map(Row::id).toList())
                .collectMultimap(RankRow::id, RankRow::rank)
                .flatMapMany(byId -> Flux.fromIterable(rows)
                        .map(row -> row.withRanks(List.copyOf(byId.getOrDefault(row.id(), List.of())))));
    }

    private Flux<RankRow> ranks(List<UUID> ids) {
        return db.sql("""
                        SELECT incarnation_id, rank, gpu_ordinal, gpu_uuid, live FROM incarnation_rank
                        WHERE incarnation_id = ANY(:ids) ORDER BY incarnation_id, rank
                        """)
                .bind("ids", ids.toArray(UUID[]::new))
                .map(r -> new RankRow(
                        r.get("incarnation_id", UUID.class),
                        new IncarnationView.Rank(
                                r.get("rank", Integer.class),
                                r.get("gpu_ordinal", Integer.class),
                                r.get("gpu_uuid", String.class),
                                Boolean.TRUE.equals(r.get("live", Boolean.class)))))
                .all();
    }

    Mono<Void> insert(NewIncarnation n, Instant now) {
        Mono<Long> incarnation = db.sql("""
                        INSERT INTO engine_incarnation (incarnation_id, stable_name, role, domain_id, host_id,
                            fabric_domain, control_endpoint, capabilities, state, fencing_epoch, owner_subject,
                            registered_at, last_heartbeat_at, state_changed_at)
                        VALUES (:id, :stableName, :role, :domainId, :hostId, :fabricDomain, :endpoint,
                            :capabilities, 'REGISTERED', 1, :owner, :now, :now, :now)
                        """)
                .bind("id", n.id())
                .bind("stableName", orNull(n.stableName(), String.class))
                .bind("role", n.role().name())
                .bind("domainId", n.domainId())
                .bind("hostId", n.hostId())
                .bind("fabricDomain", orNull(n.fabricDomain(), String.class))
                .bind("endpoint", n.controlEndpoint())
                .bind("capabilities", n.capabilities().toArray(String[]::new))
                .bind("owner", n.ownerSubject())
                .bind("now", at(now))
                .fetch()
                .rowsUpdated();
        Mono<Long> ranks = db.sql("""
                        INSERT INTO incarnation_rank (incarnation_id, rank, gpu_ordinal, gpu_uuid, host_id, live)
                        SELECT :id, t.rank, t.ordinal, t.uuid, :hostId, TRUE
                        FROM unnest(CAST(:ranks AS INTEGER[]), CAST(:ordinals AS INTEGER[]), CAST(:uuids AS TEXT[]))
                            AS t(rank, ordinal, uuid)
                        """)
                .bind("id", n.id())
                .bind("hostId", n.hostId())
                .bind(
                        "ranks",
                        n.ranks().stream().map(IncarnationView.Rank::rank).toArray(Integer[]::new))
                .bind(
                        "ordinals",
                        n.ranks().stream().map(IncarnationView.Rank::gpuOrdinal).toArray(Integer[]::new))
                .bind(
                        "uuids",
                        n.ranks().stream().map(IncarnationView.Rank::gpuUuid).toArray(String[]::new))
                .fetch()
                .rowsUpdated();
        return incarnation.then(ranks).then();
    }

    /** The incarnation holding a stable name, if any: (id, state). */
    Mono<Map.Entry<UUID, IncarnationState>> stableNameHolder(String name) {
        return db.sql("""
                        SELECT incarnation_id, state FROM engine_incarnation
                        WHERE stable_name = :name AND state NOT IN ('EXITED', 'RECLAIMED') LIMIT 1
                        """)
                .bind("name", name)
                .map(r -> Map.entry(
                        r.get("incarnation_id", UUID.class), IncarnationState.valueOf(r.get("state", String.class))))
                .one();
    }

    /** The live holder of one of these GPU ordinals on a host, if any: (ordinal, id). */
    Mono<Map.Entry<Integer, UUID>> gpuHolder(String hostId, List<Integer> ordinals) {
        return db.sql("""
                        SELECT gpu_ordinal, incarnation_id FROM incarnation_rank
                        WHERE host_id = :hostId AND gpu_ordinal = ANY(:ordinals) AND live
                        ORDER BY gpu_ordinal LIMIT 1
                        """)
                .bind("hostId", hostId)
                .bind("ordinals", ordinals.toArray(Integer[]::new))
                .map(r -> Map.entry(r.get("gpu_ordinal", Integer.class), r.get("incarnation_id", UUID.class)))
                .one();
    }

    /**
     * Moves {@code from → to} and bumps the epoch, only if the row is still in {@code from} (and at
     * {@code epoch} when given). Empty when it was not. Ranks stop being live on EXITED/RECLAIMED.
     */
    Mono<Long> transition(
            UUID id, IncarnationState from, IncarnationState to, @Nullable Long epoch, boolean heartbeat, Instant now) {
        Mono<Long> moved = db.sql("""
                        UPDATE engine_incarnation
                        SET state = :to, fencing_epoch = fencing_epoch + 1, state_changed_at = :now,
                            last_heartbeat_at = CASE WHEN :heartbeat THEN :now ELSE last_heartbeat_at END
                        WHERE incarnation_id = :id AND state = :from
                          AND (CAST(:epoch AS BIGINT) IS NULL OR fencing_epoch = :epoch)
                        RETURNING fencing_epoch
                        """)
                .bind("to", to.name())
                .bind("now", at(now))
                .bind("heartbeat", heartbeat)
                .bind("id", id)
                .bind("from", from.name())
                .bind("epoch", orNull(epoch, Long.class))
                .map(r -> r.get("fencing_epoch", Long.class))
                .one();
        if (to.holdsResources()) {
            return moved;
        }
        return moved.flatMap(newEpoch -> db.sql("UPDATE incarnation_rank SET live = FALSE WHERE incarnation_id = :id")
                .bind("id", id)
                .fetch()
                .rowsUpdated()
                .thenReturn(newEpoch));
    }

    /**
     * Records a heartbeat without a state change: only for a READY or DRAINING incarnation of this
     * owner, at this epoch when given. Empty when it does not apply (the caller takes the slow path).
     */
    Mono<StateReport> touch(UUID id, @Nullable String owner, @Nullable Long epoch, Instant now) {
        return db.sql("""
                        UPDATE engine_incarnation SET last_heartbeat_at = GREATEST(last_heartbeat_at, :now)
                        WHERE incarnation_id = :id AND state IN ('READY', 'DRAINING')
                          AND (CAST(:owner AS TEXT) IS NULL OR owner_subject = :owner)
                          AND (CAST(:epoch AS BIGINT) IS NULL OR fencing_epoch = :epoch)
                        RETURNING state, fencing_epoch
                        """)
                .bind("now", at(now))
                .bind("id", id)
                .bind("owner", orNull(owner, String.class))
                .bind("epoch", orNull(epoch, Long.class))
                .map(r -> new StateReport(
                        id, IncarnationState.valueOf(r.get("state", String.class)), r.get("fencing_epoch", Long.class)))
                .one();
    }

    static OffsetDateTime at(Instant t) {
        return t.atOffset(ZoneOffset.UTC);
    }

    private static Row toRow(Readable r) {
        String[] caps = r.get("capabilities", String[].class);
        return new Row(
                r.get("incarnation_id", UUID.class),
                r.get("stable_name", String.class),
                EngineRole.valueOf(r.get("role", String.class)),
                r.get("domain_id", String.class),
                r.get("host_id", String.class),
                r.get("fabric_domain", String.class),
                r.get("control_endpoint", String.class),
                caps == null ? List.of() : Arrays.asList(caps),
                IncarnationState.valueOf(r.get("state", String.class)),
                r.get("fencing_epoch", Long.class),
                r.get("owner_subject", String.class),
                r.get("registered_at", OffsetDateTime.class).toInstant(),
                r.get("last_heartbeat_at", OffsetDateTime.class).toInstant(),
                r.get("state_changed_at", OffsetDateTime.class).toInstant());
    }

    /** Filters of the list endpoint; null means any. */
    record Filter(
            @Nullable IncarnationState state,
            @Nullable EngineRole role,
            @Nullable String domainId,
            @Nullable String hostId) {}

    private record RankRow(UUID id, IncarnationView.Rank rank) {}

    private record Row(
            UUID id,
            @Nullable String stableName,
            EngineRole role,
            String domainId,
            String hostId,
            @Nullable String fabricDomain,
            String controlEndpoint,
            List<String> capabilities,
            IncarnationState state,
            long epoch,
            String owner,
            Instant registeredAt,
            Instant lastHeartbeatAt,
            Instant stateChangedAt) {

        IncarnationView withRanks(List<IncarnationView.Rank> ranks) {
            return new IncarnationView(
                    id,
                    stableName,
                    role,
                    domainId,
                    hostId,
                    fabricDomain,
                    controlEndpoint,
                    capabilities,
                    state,
                    epoch,
                    owner,
                    registeredAt,
                    lastHeartbeatAt,
                    stateChangedAt,
                    ranks);
        }
    }
}
