package io.kvreuse.orders;

import io.kvreuse.audit.AuditEntry;
import io.kvreuse.audit.AuditTrail;
import io.kvreuse.error.KvReuseException;
import io.kvreuse.error.ProblemType;
import io.kvreuse.protocol.AgentRegistration;
import io.kvreuse.protocol.AgentView;
import io.kvreuse.security.ApiPrincipal;
import io.r2dbc.postgresql.codec.Json;
import java.security.MessageDigest;
import java.time.Clock;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.stereotype.Service;
import org.springframework.transaction.reactive.TransactionalOperator;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;

/**
 * Node agents: an AGENT token is bound to one host when it is minted and acts for no other (403
 * {@code token-host-mismatch}); the first token subject to register a host owns it (another subject
 * gets 403). Re-registering bumps the agent epoch, so reports of a previous agent process
 * are refused. NIXL metadata is stored apart and never logged.
 */
@Service
public class NodeAgents {

    private final DatabaseClient db;
    private final TransactionalOperator tx;
    private final AuditTrail audit;
    private final JsonMapper json;
    private final Clock clock;

    NodeAgents(DatabaseClient db, TransactionalOperator tx, AuditTrail audit, JsonMapper json, Clock clock) {
        this.db = db;
        this.tx = tx;
        this.audit = audit;
        this.json = json;
        this.clock = clock;
    }

    /** Registered agent and whether this call created it. */
    record Registered(AgentView agent, boolean created) {}

    Mono<Registered> register(AgentRegistration req, ApiPrincipal p) {
        if (!p.mayActOn(req.hostId())) {
            return Mono.error(wrongHost(req.hostId(), p));
        }
        Map<Integer, byte[]> blobs = decode(req);
        OffsetDateTime now = clock.instant().atOffset(ZoneOffset.UTC);
        return owner(req.hostId(), true)
                .map(o -> {
                    if (!o.getKey().equals(p.subject())) {
                        throw notOwner(req.hostId());
                    }
                    return false;
                })
                .defaultIfEmpty(true)
                .flatMap(created -> upsert(req, p, now, created)
                        .then(replaceMetadata(req, blobs, now))
                        .then(audit.record(AuditEntry.action(
                                        p.actor(),
                                        "agent",
                                        req.hostId(),
                                        created ? "AGENT_REGISTERED" : "AGENT_REREGISTERED")
                                .withDetail(Map.of(
                                        "gpus",
                                        req.gpus().size(),
                                        "nixlAgents",
                                        req.nixlAgents().size()))))
                        .thenReturn(created))
                .as(tx::transactional)
                .flatMap(created -> view(req.hostId()).map(v -> new Registered(v, created)));
    }

    private static Map<Integer, byte[]> decode(AgentRegistration req) {
        Set<Integer> ordinals =
                req.gpus().stream().map(AgentRegistration.Gpu::ordinal).collect(Collectors.toSet());
        if (ordinals.size() != req.gpus().size()) {
            throw invalid("gpu ordinals must be unique");
        }
        Map<Integer, byte[]> blobs = new java.util.HashMap<>();
        for (AgentRegistration.NixlAgent a : req.nixlAgents()) {
            if (!ordinals.contains(a.gpuOrdinal())) {
                throw invalid("nixlAgents: gpuOrdinal " + a.gpuOrdinal() + " is not one of the host's gpus");
            }
            try {
                if (blobs.put(a.gpuOrdinal(), Base64.getDecoder().decode(a.metadata())) != null) {
                    throw invalid("nixlAgents: one agent per gpuOrdinal");
                }
            } catch (IllegalArgumentException e) {
                // the message of a decoding error may quote the input: never echo metadata
                throw invalid("nixlAgents: metadata of gpu " + a.gpuOrdinal() + " is not valid base64");
            }
        }
        return blobs;
    }

    private Mono<Void> upsert(AgentRegistration req, ApiPrincipal p, OffsetDateTime now, boolean created) {
        String gpus = json.writeValueAsString(req.gpus());
        String sql = created ? """
                  INSERT INTO node_agent (host_id, owner_subject, gpus, state, registered_at, last_heartbeat_at)
                  VALUES (:h, :owner, :gpus, 'ONLINE', :now, :now)
                  """ : """
                  UPDATE node_agent SET gpus = :gpus, state = 'ONLINE', agent_epoch = agent_epoch + 1,
                      last_heartbeat_at = :now WHERE host_id = :h AND owner_subject = :owner
                  """;
        return db.sql(sql)
                .bind("h", req.hostId())
                .bind("owner", p.subject())
                .bind("gpus", Json.of(gpus))
                .bind("now", now)
                .then();
    }

    private Mono<Void> replaceMetadata(AgentRegistration req, Map<Integer, byte[]> blobs, OffsetDateTime now) {
        return db.sql("DELETE FROM nixl_agent_metadata WHERE host_id = :h")
                .bind("h", req.hostId())
                .then()
                .thenMany(Flux.fromIterable(req.nixlAgents())
                        .concatMap(a -> db.sql("""
                                INSERT INTO nixl_agent_metadata (host_id, gpu_ordinal, agent_name, metadata, updated_at)
                                VALUES (:h, :o, :n, :m, :now)
                                """)
                                .bind("h", req.hostId())
                                .bind("o", a.gpuOrdinal())
                                .bind("n", a.name())
                                .bind("m", java.nio.ByteBuffer.wrap(blobs.get(a.gpuOrdinal())))
                                .bind("now", now)
                                .then()))
                .then();
    }

    Mono<AgentView> heartbeat(String hostId, @Nullable Long epoch, ApiPrincipal p) {
        return requireOwner(hostId, p)
                .flatMap(current -> {
                    if (epoch != null && epoch != current) {
                        return Mono.error(staleEpoch(hostId, epoch, current));
                    }
                    return db.sql("""
                                    UPDATE node_agent SET last_heartbeat_at = :now, heartbeats = heartbeats + 1, state = 'ONLINE'
                                    WHERE host_id = :h
                                    """)
                            .bind("now", clock.instant().atOffset(ZoneOffset.UTC))
                            .bind("h", hostId)
                            .then();
                })
                .then(view(hostId));
    }

    /**
     * The agent's current epoch if the principal owns the host; 403 for an AGENT token bound to
     * another host (decided before anything is read), 404 unknown host, 403 another owner.
     */
    public Mono<Long> requireOwner(String hostId, ApiPrincipal p) {
        String bound = p.agentHost();
        if (bound != null && !bound.equals(hostId)) {
            return Mono.error(wrongHost(hostId, p));
        }
        return owner(hostId, false)
                .switchIfEmpty(Mono.error(() ->
                        new KvReuseException(ProblemType.NO_SUCH_AGENT, "no agent registered for host " + hostId)))
                .map(o -> {
                    if (!p.isOperator() && !o.getKey().equals(p.subject())) {
                        throw notOwner(hostId);
                    }
                    return o.getValue();
                });
    }

    private Mono<Map.Entry<String, Long>> owner(String hostId, boolean lock) {
        return db.sql("SELECT owner_subject, agent_epoch FROM node_agent WHERE host_id = :h"
                        + (lock ? " FOR UPDATE" : ""))
                .bind("h", hostId)
                .map((r, m) -> Map.entry(r.get("owner_subject", String.class), r.get("agent_epoch", Long.class)))
                .one();
    }

    Mono<AgentView> get(String hostId, ApiPrincipal p) {
        return requireOwner(hostId, p).then(view(hostId));
    }

    Flux<AgentView> list(ApiPrincipal p) {
        return db.sql(
                        "SELECT host_id FROM node_agent WHERE (:all OR owner_subject = :owner) ORDER BY host_id LIMIT 5000")
                .bind("all", p.isOperator())
                .bind("owner", p.subject())
                .map((r, m) -> r.get("host_id", String.class))
                .all()
                .concatMap(this::view);
    }

    private Mono<AgentView> view(String hostId) {
        Mono<List<AgentView.NixlAgent>> agents = db.sql(
                        "SELECT gpu_ordinal, agent_name, metadata FROM nixl_agent_metadata WHERE host_id = :h ORDER BY gpu_ordinal")
                .bind("h", hostId)
                .map((r, m) -> {
                    java.nio.ByteBuffer b = r.get("metadata", java.nio.ByteBuffer.class);
                    byte[] bytes = new byte[b.remaining()];
                    b.get(bytes);
                    return new AgentView.NixlAgent(
                            r.get("gpu_ordinal", Integer.class),
                            r.get("agent_name", String.class),
                            bytes.length,
                            sha256(bytes));
                })
                .all()
                .collectList();
        return db.sql("SELECT * FROM node_agent WHERE host_id = :h")
                .bind("h", hostId)
                .map((r, m) -> new AgentView(
                        hostId,
                        r.get("state", String.class),
                        r.get("agent_epoch", Long.class),
                        List.of(json.readValue(r.get("gpus", Json.class).asString(), AgentView.Gpu[].class)),
                        List.of(),
                        r.get("registered_at", OffsetDateTime.class).toInstant(),
                        r.get("last_heartbeat_at", OffsetDateTime.class).toInstant()))
                .one()
                .zipWith(
                        agents,
                        (v, a) -> new AgentView(
                                v.hostId(),
                                v.state(),
                                v.agentEpoch(),
                                v.gpus(),
                                a,
                                v.registeredAt(),
                                v.lastHeartbeatAt()));
    }

    private static String sha256(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    static KvReuseException wrongHost(String hostId, ApiPrincipal p) {
        return new KvReuseException(
                        ProblemType.TOKEN_HOST_MISMATCH,
                        "this AGENT token acts for host " + p.hostId() + " only, not for " + hostId)
                .with("hostId", hostId)
                .with("tokenHostId", p.hostId());
    }

    static KvReuseException notOwner(String hostId) {
        return new KvReuseException(
                        ProblemType.NOT_HOST_OWNER, "host " + hostId + " is registered to another agent token subject")
                .with("hostId", hostId);
    }

    static KvReuseException staleEpoch(String hostId, long presented, long current) {
        return new KvReuseException(
                        ProblemType.STALE_EPOCH,
                        "agent of host " + hostId + " is at epoch " + current + ", the report carried " + presented)
                .with("hostId", hostId)
                .with("presentedEpoch", presented)
                .with("currentEpoch", current);
    }

    static KvReuseException invalid(String detail) {
        return new KvReuseException(ProblemType.INVALID_REQUEST, detail);
    }
}
