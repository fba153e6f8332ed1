package io.kvreuse.incarnation;

import static io.kvreuse.incarnation.IncarnationState.DRAINING;
import static io.kvreuse.incarnation.IncarnationState.LOST;
import static io.kvreuse.incarnation.IncarnationState.READY;
import static io.kvreuse.incarnation.IncarnationState.REGISTERED;
import static io.kvreuse.incarnation.IncarnationState.SUSPECT;

import io.kvreuse.audit.AuditEntry;
import io.kvreuse.audit.AuditTrail;
import io.kvreuse.config.Ticker;
import io.kvreuse.store.ObservedSilence;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.web.server.context.WebServerInitializedEvent;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.event.EventListener;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;
import org.springframework.transaction.reactive.TransactionalOperator;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Moves silent incarnations to SUSPECT and then LOST. One replica sweeps at a time: each sweep
 * runs in a transaction that first takes a transaction-level advisory lock and gives up when another
 * replica holds it. The moves are set-based conditional updates, so even overlapping sweeps could
 * never move one incarnation twice. Silence is measured only from the moment this replica could
 * hear heartbeats ({@link ObservedSilence}): from its web server's start, after a sweep that could
 * not reach PostgreSQL from the first sweep that did, and after a database that hung from the first
 * sweep it answered; heartbeats sent while the control plane or its database was away were lost,
 * not missed. One sweep moves an incarnation at most one state:
 * SUSPECT to LOST runs before READY to SUSPECT, so a long silence shows as SUSPECT for at least a
 * sweep interval, never as READY then LOST.
 */
@Component
@ConditionalOnProperty(name = "kvreuse.role", havingValue = "control-plane", matchIfMissing = true)
public class LivenessSweeper {

    /** The advisory lock key of the liveness sweeper ("kvrlive"); unique among kvreuse's locks. */
    static final long LOCK_KEY = 0x6b76726c697665L;

    static final String ACTOR = "system:liveness";
    private static final Log log = LogFactory.getLog(LivenessSweeper.class);
    private static final List<IncarnationState> CAN_GO_SUSPECT = List.of(REGISTERED, READY, DRAINING);

    private final DatabaseClient db;
    private final TransactionalOperator tx;
    private final AuditTrail audit;
    private final ApplicationEventPublisher events;
    private final Clock clock;
    private final LivenessProperties props;
    private final MeterRegistry meters;
    private final ObservedSilence silence;

    LivenessSweeper(
            DatabaseClient db,
            TransactionalOperator tx,
            AuditTrail audit,
            ApplicationEventPublisher events,
            Clock clock,
            Ticker ticker,
            LivenessProperties props,
            MeterRegistry meters) {
        this.db = db;
        this.tx = tx;
        this.audit = audit;
        this.events = events;
        this.clock = clock;
        this.props = props;
        this.meters = meters;
        this.silence =
                new ObservedSilence(ObservedSilence.gapFor(props.suspectAfter(), props.sweepInterval()), ticker::nanos);
        for (String outcome : List.of("ran", "skipped", "failed")) {
            sweeps(outcome);
        }
        transitions(IncarnationState.SUSPECT);
        transitions(IncarnationState.LOST);
    }

    private Counter sweeps(String outcome) {
        return Counter.builder("kvreuse.liveness.sweeps")
                .description("engine liveness sweeps by outcome (skipped: another replica held the sweep lock)")
                .tag("outcome", outcome)
                .register(meters);
    }

    private Counter transitions(IncarnationState to) {
        return Counter.builder("kvreuse.liveness.transitions")
                .description("incarnations the liveness sweeper moved, by the state entered")
                .tag("to", to.name())
                .register(meters);
    }

    @Scheduled(
            fixedDelayString = "${kvreuse.liveness.sweep-interval:1s}",
            initialDelayString = "${kvreuse.liveness.sweep-interval:1s}")
    Mono<Void> scheduledSweep() {
        if (!props.sweepEnabled()) {
            return Mono.empty();
        }
        return sweepOnce()
                .doOnNext(r -> {
                    if (!r.transitions().isEmpty()) {
                        log.info("liveness sweep moved " + r.transitions().size() + " incarnation(s)");
                    }
                })
                .onErrorResume(e -> {
                    log.warn("liveness sweep failed; retrying next interval: " + e);
                    return Mono.empty();
                })
                .then();
    }

    /** Heartbeats can reach this replica from now on; silence before this moment was not observed. */
    @EventListener(WebServerInitializedEvent.class)
    void listening() {
        silence.listening(clock.instant());
    }

    /** One sweep now, as of the injected clock; the result says whether this call held the lock. */
    public Mono<SweepResult> sweepOnce() {
        return Mono.defer(() -> {
            Instant now = clock.instant();
            List<IncarnationStateChanged> moved = new ArrayList<>();
            Mono<Boolean> sweep = tryLock().flatMap(locked -> {
                // the time the database answered, not the sweep's start: the answer may have hung
                silence.reached(clock.instant());
                if (!locked) {
                    return Mono.just(false);
                }
                // LOST first: an incarnation this sweep makes SUSPECT is not also made LOST by it
                return move(List.of(SUSPECT), LOST, props.lostAfter(), now, "liveness gone")
                        .concatWith(move(CAN_GO_SUSPECT, SUSPECT, props.suspectAfter(), now, "missed heartbeats"))
                        .doOnNext(moved::add)
                        .then(Mono.just(true));
            });
            return sweep.as(tx::transactional)
                    .map(ran -> {
                        moved.forEach(events::publishEvent);
                        return new SweepResult(ran, List.copyOf(moved));
                    })
                    .doOnNext(this::count)
                    .doOnError(e -> {
                        silence.failed();
                        sweeps("failed").increment();
                    });
        });
    }

    /** Sweeps by outcome, and transitions by target state: a burst of LOST is worth an alert. */
    private void count(SweepResult r) {
        sweeps(r.ran() ? "ran" : "skipped").increment();
        r.transitions().forEach(c -> transitions(c.to()).increment());
    }

    private Mono<Boolean> tryLock() {
        return db.sql("SELECT pg_try_advisory_xact_lock(:key) AS locked")
                .bind("key", LOCK_KEY)
                .map(r -> Boolean.TRUE.equals(r.get("locked", Boolean.class)))
                .one();
    }

    private Flux<IncarnationStateChanged> move(
            List<IncarnationState> from, IncarnationState to, Duration after, Instant now, String reason) {
        java.util.Optional<Instant> cutoff = silence.cutoff(now, after);
        if (cutoff.isEmpty()) {
            return Flux.empty(); // too soon after a start or a database outage to call anyone silent
        }
        Instant silentSince = cutoff.get();
        // NO KEY UPDATE: a lease, command or destination being written for an engine holds FOR KEY
        // SHARE on its row (the foreign-key check); FOR UPDATE would skip that engine for the sweep
        return db.sql("""
                        WITH due AS (
                            SELECT incarnation_id, state FROM engine_incarnation
                            WHERE state = ANY(CAST(:from AS TEXT[])) AND last_heartbeat_at < :cutoff
                            ORDER BY last_heartbeat_at
                            LIMIT :batch
                            FOR NO KEY UPDATE SKIP LOCKED)
                        UPDATE engine_incarnation e
                        SET state = :to, fencing_epoch = e.fencing_epoch + 1, state_changed_at = :now
                        FROM due
                        WHERE e.incarnation_id = due.incarnation_id AND e.state = due.state
                        RETURNING e.incarnation_id, due.state AS from_state, e.fencing_epoch
                        """)
                .bind("from", from.stream().map(Enum::name).toArray(String[]::new))
                .bind("cutoff", IncarnationStore.at(silentSince))
                .bind("batch", props.sweepBatchSize())
                .bind("to", to.name())
                .bind("now", IncarnationStore.at(now))
                .map(r -> new IncarnationStateChanged(
                        r.get("incarnation_id", UUID.class),
                        IncarnationState.valueOf(r.get("from_state", String.class)),
                        to,
                        r.get("fencing_epoch", Long.class)))
                .all()
                // read every row before writing audit rows on the same connection
                .collectList()
                .flatMapMany(Flux::fromIterable)
                .concatMap(c -> audit.record(AuditEntry.transition(
                                        ACTOR,
                                        Incarnations.SUBJECT_TYPE,
                                        c.incarnationId().toString(),
                                        String.valueOf(c.from()),
                                        c.to().name(),
                                        c.fencingEpoch())
                                .withReason(reason)
                                .withDetail(java.util.Map.of(
                                        "silentForMs",
                                        Duration.between(silentSince, now).toMillis())))
                        .thenReturn(c));
    }

    /** What one sweep did: whether it held the lock, and the transitions it made. */
    public record SweepResult(boolean ran, List<IncarnationStateChanged> transitions) {}
}
