package io.kvreuse.bank;

import io.kvreuse.audit.AuditEntry;
import io.kvreuse.audit.AuditTrail;
import io.kvreuse.bank.BankStore.ChangeSet;
import io.kvreuse.error.InvalidRequestException;
import io.kvreuse.error.KvReuseException;
import io.kvreuse.error.ProblemType;
import io.kvreuse.protocol.ClearPolicy;
import io.kvreuse.protocol.HostNames;
import io.kvreuse.protocol.KvEventFormat;
import io.kvreuse.protocol.KvEventSource;
import io.kvreuse.security.ApiPrincipal;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.regex.Pattern;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.stereotype.Service;
import org.springframework.transaction.reactive.TransactionalOperator;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The engines' own KV event sources of retained banks (docs/kv-events.md): set by the owner at
 * creation or later, read by the agent of the bank's host, which also reports streams it lost.
 */
@Service
class EventSources {

    /** {@code tcp://host:port} (a host the agent can connect to, not a bind wildcard) or {@code ipc://path}. */
    private static final Pattern ENDPOINT =
            Pattern.compile("tcp://(\\[[0-9A-Fa-f:.]+]|[A-Za-z0-9][A-Za-z0-9.-]*):([0-9]{1,5})|ipc://[^\\s\\x00]+");

    private final DatabaseClient db;
    private final TransactionalOperator tx;
    private final BankStore store;
    private final AuditTrail audit;
    private final ApplicationEventPublisher events;
    private final MeterRegistry meters;
    private final Clock clock;

    EventSources(
            DatabaseClient db,
            TransactionalOperator tx,
            BankStore store,
            AuditTrail audit,
            ApplicationEventPublisher events,
            MeterRegistry meters,
            Clock clock) {
        this.db = db;
        this.tx = tx;
        this.store = store;
        this.audit = audit;
        this.events = events;
        this.meters = meters;
        this.clock = clock;
        for (io.kvreuse.protocol.StreamBreak.Kind kind : io.kvreuse.protocol.StreamBreak.Kind.values()) {
            streamBreaks(kind);
        }
    }

    private io.micrometer.core.instrument.Counter streamBreaks(io.kvreuse.protocol.StreamBreak.Kind kind) {
        return io.micrometer.core.instrument.Counter.builder("kvreuse.inventory.stream.breaks")
                .description("engine event streams broken by kind (GAP: replay could not fill it; RESTART: the"
                        + " sequence went backwards); the rank needs a snapshot")
                .tag("kind", kind.name())
                .register(meters);
    }

    /** Checks a source against the bank's ranks before anything is written. */
    static void validate(InventoryRequests.EventSourceRequest source, int tp) {
        Set<Integer> ranks = new java.util.HashSet<>();
        for (int i = 0; i < source.ranks().size(); i++) {
            InventoryRequests.StreamRequest s = source.ranks().get(i);
            String where = "eventSource.ranks[" + i + "]";
            if (!ranks.add(s.rank()) || s.rank() >= tp) {
                throw invalid(
                        ProblemType.EVENT_SOURCE_RANKS,
                        where + ": an event source names each rank 0.." + (tp - 1) + " exactly once");
            }
            endpoint(s.endpoint(), where + ".endpoint");
            if (s.replayEndpoint() != null) {
                endpoint(s.replayEndpoint(), where + ".replayEndpoint");
            }
            if (s.topic() != null && s.topic().indexOf('\0') >= 0) {
                throw invalid(ProblemType.INVALID_EVENT_SOURCE, where + ".topic: no NUL characters");
            }
        }
        if (ranks.size() != tp) {
            throw invalid(
                    ProblemType.EVENT_SOURCE_RANKS,
                    "eventSource.ranks: an event source names each rank 0.." + (tp - 1) + " exactly once");
        }
    }

    private static void endpoint(String endpoint, String where) {
        var m = ENDPOINT.matcher(endpoint);
        if (!m.matches()) {
            throw invalid(
                    ProblemType.INVALID_EVENT_ENDPOINT,
                    where + ": tcp://HOST:PORT or ipc://PATH, a host the node agent connects to (not *)");
        }
        String host = m.group(1);
        // a name no resolver can look up would fail the node agent's connect at every start
        if (host != null && !host.startsWith("[") && !HostNames.isDnsName(host)) {
            throw invalid(
                    ProblemType.INVALID_EVENT_ENDPOINT,
                    where + ": " + host + " is no host name (dot-separated labels of 1 to 63 letters, digits and"
                            + " inner hyphens, 253 characters at most)");
        }
        if (m.group(2) != null) {
            int port = Integer.parseInt(m.group(2));
            if (port < 1 || port > 65_535) {
                throw invalid(ProblemType.INVALID_EVENT_ENDPOINT, where + ": port " + port + " is outside 1..65535");
            }
        }
    }

    /** Writes (or replaces) the source inside the caller's transaction; the revision rises on a change. */
    Mono<Void> write(UUID bankId, InventoryRequests.EventSourceRequest source, String actor) {
        OffsetDateTime now = OffsetDateTime.now(clock);
        Flux<Void> streams = Flux.fromIterable(source.ranks())
                .concatMap(s -> db.sql("""
                                INSERT INTO bank_event_stream (bank_id, rank, endpoint, replay_endpoint, topic)
                                VALUES (:b, :r, :e, :re, :t)
                                """)
                        .bind("b", bankId)
                        .bind("r", s.rank())
                        .bind("e", s.endpoint())
                        .bind("re", io.kvreuse.store.Sql.orNull(s.replayEndpoint(), String.class))
                        .bind("t", io.kvreuse.store.Sql.orNull(s.topic(), String.class))
                        .then());
        return db.sql("""
                        INSERT INTO bank_event_source (bank_id, format, all_blocks_cleared, updated_at)
                        VALUES (:b, :f, :c, :now)
                        ON CONFLICT (bank_id) DO UPDATE SET format = EXCLUDED.format,
                            all_blocks_cleared = EXCLUDED.all_blocks_cleared, updated_at = EXCLUDED.updated_at,
                            revision = bank_event_source.revision + 1
                        """)
                .bind("b", bankId)
                .bind("f", source.format().name())
                .bind("c", source.allBlocksCleared().name())
                .bind("now", now)
                .then()
                .then(db.sql("DELETE FROM bank_event_stream WHERE bank_id = :b")
                        .bind("b", bankId)
                        .then())
                .thenMany(streams)
                // a new stream's engine sequence says nothing about the old one's
                .then(db.sql("UPDATE bank_part SET source_sequence = NULL WHERE bank_id = :b")
                        .bind("b", bankId)
                        .then())
                .then(audit.record(AuditEntry.action(actor, "bank", bankId.toString(), "EVENT_SOURCE_SET")
                        .withDetail(Map.of(
                                "format",
                                source.format().name(),
                                "allBlocksCleared",
                                source.allBlocksCleared().name(),
                                "ranks",
                                source.ranks().size()))));
    }

    /** {@code PUT /banks/{bankId}/event-source}: the owner names or replaces its bank's source. */
    Mono<KvEventSource> set(UUID bankId, InventoryRequests.EventSourceRequest source, ApiPrincipal caller) {
        return store.bank(bankId, true)
                .filter(b -> b.ownerSubject().equals(caller.subject()) && caller.agentHost() == null)
                .switchIfEmpty(Mono.error(() -> BankExceptions.noSuchBank(bankId)))
                .flatMap(bank -> {
                    if (bank.state() == BankState.DROPPED) {
                        return Mono.error(BankExceptions.dropped(bankId));
                    }
                    validate(source, bank.tp());
                    return write(bankId, source, caller.actor());
                })
                .as(tx::transactional)
                .then(Mono.defer(() -> sources("b.bank_id = :key", bankId).next()))
                .switchIfEmpty(Mono.error(() -> BankExceptions.noSuchBank(bankId)));
    }

    /** The bank's source, for its owner, an operator or the host's agent. */
    Mono<KvEventSource> get(UUID bankId, ApiPrincipal caller) {
        return store.bank(bankId, false)
                .filter(b -> caller.isOperator() || b.feedableBy(caller))
                .switchIfEmpty(Mono.error(() -> BankExceptions.noSuchBank(bankId)))
                .flatMap(b -> sources("b.bank_id = :key", bankId).next())
                .switchIfEmpty(Mono.error(() -> noSource(bankId)));
    }

    /** Every source of the live banks on {@code hostId}: what that host's agent subscribes to. */
    Flux<KvEventSource> ofHost(String hostId, ApiPrincipal caller) {
        if (!caller.isOperator() && !hostId.equals(caller.agentHost())) {
            // the host-binding problem every other agent resource answers (docs/api.md)
            return Flux.error(new KvReuseException(
                            ProblemType.TOKEN_HOST_MISMATCH,
                            "this AGENT token acts for host " + caller.agentHost() + " only, not for " + hostId)
                    .with("hostId", hostId)
                    .with("tokenHostId", caller.agentHost()));
        }
        // a host nobody registered (no agent, no engine) is unknown, as for the other agent resources
        return db.sql("""
                        SELECT EXISTS (SELECT 1 FROM node_agent WHERE host_id = :h)
                            OR EXISTS (SELECT 1 FROM engine_incarnation WHERE host_id = :h) AS known
                        """)
                .bind("h", hostId)
                .map((row, meta) -> Boolean.TRUE.equals(row.get("known", Boolean.class)))
                .one()
                .flatMapMany(known -> known
                        ? sources(
                                "i.host_id = :key AND b.state <> 'DROPPED' AND i.state IN ('REGISTERED', 'READY')",
                                hostId)
                        : Flux.error(new KvReuseException(
                                ProblemType.NO_SUCH_AGENT, "no agent or engine registered for host " + hostId)));
    }

    private Flux<KvEventSource> sources(String where, Object key) {
        return db.sql("""
                        SELECT b.bank_id, b.incarnation_id, b.bank_epoch, b.capacity_blocks, s.format, s.all_blocks_cleared,
                               s.revision, t.rank, t.endpoint, t.replay_endpoint, t.topic,
                               p.last_event_id, p.events_started, p.source_sequence, p.needs_snapshot
                        FROM bank_event_source s
                        JOIN retained_bank b ON b.bank_id = s.bank_id
                        JOIN engine_incarnation i ON i.incarnation_id = b.incarnation_id
                        JOIN bank_event_stream t ON t.bank_id = s.bank_id
                        JOIN bank_part p ON p.bank_id = t.bank_id AND p.rank = t.rank
                        WHERE
                        """ + where + " ORDER BY b.bank_id, t.rank")
                .bind("key", key)
                .map((row, meta) -> Map.entry(
                        new KvEventSource(
                                row.get("bank_id", UUID.class),
                                row.get("incarnation_id", UUID.class),
                                row.get("bank_epoch", Long.class),
                                row.get("capacity_blocks", Integer.class),
                                KvEventFormat.valueOf(row.get("format", String.class)),
                                ClearPolicy.valueOf(row.get("all_blocks_cleared", String.class)),
                                row.get("revision", Long.class),
                                List.of()),
                        new KvEventSource.Stream(
                                row.get("rank", Integer.class),
                                row.get("endpoint", String.class),
                                row.get("replay_endpoint", String.class),
                                row.get("topic", String.class),
                                row.get("last_event_id", Long.class),
                                Boolean.TRUE.equals(row.get("events_started", Boolean.class)),
                                row.get("source_sequence", Long.class),
                                Boolean.TRUE.equals(row.get("needs_snapshot", Boolean.class)))))
                .all()
                .bufferUntilChanged(e -> e.getKey().bankId())
                .map(rows -> {
                    List<KvEventSource.Stream> streams = new ArrayList<>();
                    rows.forEach(e -> streams.add(e.getValue()));
                    KvEventSource head = rows.getFirst().getKey();
                    return new KvEventSource(
                            head.bankId(),
                            head.incarnationId(),
                            head.bankEpoch(),
                            head.capacityBlocks(),
                            head.format(),
                            head.allBlocksCleared(),
                            head.revision(),
                            List.copyOf(streams));
                });
    }

    /**
     * The agent lost events of a rank that no replay returns, or saw the engine restart: the rank
     * needs a snapshot and the bank is unpublished until it has one, as after an event-id gap. A
     * gap the replay filled ({@code REPLAYED}) changes nothing but the record.
     */
    Mono<Void> streamBroke(UUID bankId, int rank, InventoryRequests.StreamBreak report, ApiPrincipal caller) {
        if (!report.kind().lost()) {
            return replayedGap(bankId, rank, report, caller);
        }
        ChangeSet changes = new ChangeSet();
        String action = report.kind() == io.kvreuse.protocol.StreamBreak.Kind.GAP ? "EVENT_GAP" : "ENGINE_RESTART";
        return store.bank(bankId, true)
                .filter(b -> b.feedableBy(caller))
                .switchIfEmpty(Mono.error(() -> BankExceptions.noSuchBank(bankId)))
                .flatMap(bank -> bank.state() == BankState.DROPPED
                        ? Mono.error(BankExceptions.dropped(bankId))
                        : db.sql("UPDATE bank_part SET needs_snapshot = TRUE WHERE bank_id = :b AND rank = :r")
                                .bind("b", bankId)
                                .bind("r", rank)
                                .fetch()
                                .rowsUpdated())
                .flatMap(n -> n == 0 ? Mono.error(BankExceptions.noSuchPart(bankId, rank)) : Mono.just(n))
                .then(Mono.defer(() -> audit.record(AuditEntry.action(caller.actor(), "bank", bankId.toString(), action)
                        .withReason(
                                report.kind() == io.kvreuse.protocol.StreamBreak.Kind.GAP
                                        ? "the engine's event stream skipped sequences that its replay could not return"
                                        : "the engine's event stream went backwards: the engine restarted")
                        .withDetail(streamDetail(rank, report)))))
                .then(Mono.defer(() -> store.refreshPublication(bankId, caller.actor(), changes)))
                .then(Mono.defer(() -> store.appendFeed(bankId, changes)))
                .as(tx::transactional)
                .doOnSuccess(v -> {
                    streamBreaks(report.kind()).increment();
                    events.publishEvent(new BankChanged(bankId));
                });
    }

    /**
     * Sequences {@code expectedSequence .. receivedSequence - 1} were missing from the live stream
     * and the replay returned all of them: audited once as {@code EVENT_GAP_REPLAYED} (the same
     * report again, e.g. a retry whose first answer was lost, is recorded already); the bank, its
     * parts and its publication stay as they are.
     */
    private Mono<Void> replayedGap(UUID bankId, int rank, InventoryRequests.StreamBreak report, ApiPrincipal caller) {
        if (report.expectedSequence() < 0 || report.receivedSequence() <= report.expectedSequence()) {
            return Mono.error(invalid(
                    ProblemType.INVALID_REQUEST,
                    "a REPLAYED gap is expectedSequence (>= 0) .. receivedSequence - 1: receivedSequence must be"
                            + " above expectedSequence"));
        }
        return store.bank(bankId, false)
                .filter(b -> b.feedableBy(caller))
                .switchIfEmpty(Mono.error(() -> BankExceptions.noSuchBank(bankId)))
                .flatMap(bank -> bank.state() == BankState.DROPPED
                        ? Mono.error(BankExceptions.dropped(bankId))
                        : db.sql("SELECT EXISTS (SELECT 1 FROM bank_part WHERE bank_id = :b AND rank = :r) AS known")
                                .bind("b", bankId)
                                .bind("r", rank)
                                .map((row, meta) -> Boolean.TRUE.equals(row.get("known", Boolean.class)))
                                .one())
                .flatMap(known -> known ? Mono.just(true) : Mono.error(BankExceptions.noSuchPart(bankId, rank)))
                // the row lock makes a concurrent copy of the same report wait and then find it recorded
                .flatMap(known -> db.sql("""
                                UPDATE bank_event_stream SET replayed_from = :f, replayed_until = :u
                                WHERE bank_id = :b AND rank = :r
                                  AND (replayed_from, replayed_until) IS DISTINCT FROM (:f, :u)
                                """)
                        .bind("b", bankId)
                        .bind("r", rank)
                        .bind("f", report.expectedSequence())
                        .bind("u", report.receivedSequence())
                        .fetch()
                        .rowsUpdated())
                .flatMap(updated -> updated > 0
                        ? Mono.just(true)
                        // no row updated: the same gap is on record, or the bank names no source (always audited)
                        : db.sql("SELECT NOT EXISTS (SELECT 1 FROM bank_event_stream WHERE bank_id = :b AND rank = :r)"
                                        + " AS fresh")
                                .bind("b", bankId)
                                .bind("r", rank)
                                .map((row, meta) -> Boolean.TRUE.equals(row.get("fresh", Boolean.class)))
                                .one())
                .flatMap(fresh -> fresh
                        ? audit.record(
                                AuditEntry.action(caller.actor(), "bank", bankId.toString(), "EVENT_GAP_REPLAYED")
                                        .withReason("the engine's live event stream skipped sequences that its replay"
                                                + " returned: nothing was lost")
                                        .withDetail(streamDetail(rank, report)))
                        : Mono.empty())
                .then()
                .as(tx::transactional)
                .doOnSuccess(v -> streamBreaks(report.kind()).increment());
    }

    private static Map<String, Object> streamDetail(int rank, InventoryRequests.StreamBreak report) {
        Map<String, Object> detail = new HashMap<>();
        detail.put("rank", rank);
        detail.put("expectedSequence", report.expectedSequence());
        detail.put("receivedSequence", report.receivedSequence());
        return detail;
    }

    private static KvReuseException noSource(UUID bankId) {
        return new KvReuseException(
                        ProblemType.EVENT_SOURCE_NOT_FOUND,
                        "bank " + bankId + " names no event source; its engine feeds the events API itself")
                .with("bankId", bankId);
    }

    private static InvalidRequestException invalid(ProblemType type, String detail) {
        return new InvalidRequestException(type, detail);
    }
}
