package io.kvreuse.orders;

import io.kvreuse.audit.AuditEntry;
import io.kvreuse.audit.AuditTrail;
import io.kvreuse.config.Ticker;
import io.kvreuse.store.ObservedSilence;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.boot.web.server.context.WebServerInitializedEvent;
import org.springframework.context.event.EventListener;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;
import org.springframework.transaction.reactive.TransactionalOperator;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Marks node agents SUSPECT, then OFFLINE, when their heartbeats stop; a heartbeat or a
 * re-registration makes them ONLINE again. Runs on one replica at a time (advisory lock). An
 * OFFLINE agent's orders are not reassigned: a transfer it started may still be running. As for
 * engines ({@link ObservedSilence}), silence counts only from when this replica could hear heartbeats:
 * its web server listening (a control-plane restart is not the agents' silence), and the first sweep
 * that reached the database after one that failed or after a hang. One sweep moves an agent one state
 * at most.
 */
@Component
public class AgentLivenessSweeper {

    private static final Log log = LogFactory.getLog(AgentLivenessSweeper.class);
    private static final long LOCK_KEY = 0x6b76_7265_7573_6541L;

    private final DatabaseClient db;
    private final TransactionalOperator tx;
    private final AuditTrail audit;
    private final Clock clock;
    private final AgentLivenessProperties properties;
    private final ObservedSilence silence;

    AgentLivenessSweeper(
            DatabaseClient db,
            TransactionalOperator tx,
            AuditTrail audit,
            Clock clock,
            Ticker ticker,
            AgentLivenessProperties properties) {
        this.db = db;
        this.tx = tx;
        this.audit = audit;
        this.clock = clock;
        this.properties = properties;
        this.silence = new ObservedSilence(
                ObservedSilence.gapFor(properties.suspectAfter(), properties.sweepInterval()), ticker::nanos);
    }

    /** Heartbeats can reach this replica from now on. */
    @EventListener(WebServerInitializedEvent.class)
    void listening() {
        silence.listening(clock.instant());
    }

    @Scheduled(fixedDelayString = "${kvreuse.agents.sweep-interval:1s}")
    void scheduled() {
        sweepOnce()
                .subscribe(
                        null, e -> log.warn("agent liveness sweep failed; retrying next interval: " + e.getMessage()));
    }

    /** One sweep; the agents moved, or empty when another replica holds the sweep. */
    public Mono<List<Moved>> sweepOnce() {
        Instant now = clock.instant();
        return db.sql("SELECT pg_try_advisory_xact_lock(:key) AS locked")
                .bind("key", LOCK_KEY)
                .map((row, meta) -> Boolean.TRUE.equals(row.get("locked", Boolean.class)))
                .one()
                .doOnNext(locked -> silence.reached(clock.instant()))
                .flatMap(locked -> locked ? move(now).collectList() : Mono.just(List.<Moved>of()))
                // the moved rows are all read before the audit inserts go out on the same connection:
                // an insert issued while the update's rows still stream waits for them, and they wait
                // for the insert's demand
                .flatMap(moved -> Flux.fromIterable(moved)
                        .concatMap(m -> audit.record(
                                AuditEntry.transition("system", "agent", m.hostId(), m.from(), m.to(), m.epoch())))
                        .then(Mono.just(moved)))
                .as(tx::transactional)
                .doOnError(e -> silence.failed());
    }

    private Flux<Moved> move(Instant now) {
        // NO KEY UPDATE: an order being written for a host holds FOR KEY SHARE on its row (the
        // foreign-key check); FOR UPDATE would skip that agent for the sweep
        return db.sql("""
                        WITH due AS (
                            SELECT host_id, state AS from_state FROM node_agent
                            WHERE (state = 'ONLINE' AND last_heartbeat_at < :suspect)
                               OR (state = 'SUSPECT' AND last_heartbeat_at < :offline)
                            FOR NO KEY UPDATE SKIP LOCKED)
                        UPDATE node_agent n
                        SET state = CASE WHEN due.from_state = 'SUSPECT' THEN 'OFFLINE' ELSE 'SUSPECT' END
                        FROM due WHERE n.host_id = due.host_id
                        RETURNING n.host_id, due.from_state, n.state, n.agent_epoch
                        """)
                .bind("suspect", cutoff(now, properties.suspectAfter()).atOffset(ZoneOffset.UTC))
                .bind("offline", cutoff(now, properties.offlineAfter()).atOffset(ZoneOffset.UTC))
                .map((row, meta) -> new Moved(
                        row.get("host_id", String.class),
                        row.get("from_state", String.class),
                        row.get("state", String.class),
                        row.get("agent_epoch", Long.class)))
                .all();
    }

    /**
     * Heartbeats older than this are silence of {@code after}; until this replica has watched for
     * {@code after} (since it listened, or since the database answered again after an outage or a
     * hang), a cutoff no heartbeat is older than: nobody is judged for time nobody watched.
     */
    private Instant cutoff(Instant now, Duration after) {
        return silence.cutoff(now, after).orElse(Instant.EPOCH);
    }

    /** One agent's change of liveness. */
    public record Moved(String hostId, String from, String to, long epoch) {}
}
