package io.kvreuse.incarnation;

import static io.kvreuse.incarnation.IncarnationState.DRAINING;
import static io.kvreuse.incarnation.IncarnationState.EXITED;
import static io.kvreuse.incarnation.IncarnationState.READY;

import io.kvreuse.audit.AuditEntry;
import io.kvreuse.audit.AuditTrail;
import io.kvreuse.error.KvReuseException;
import io.kvreuse.error.ProblemType;
import io.kvreuse.security.ApiPrincipal;
import java.time.Clock;
import java.time.Duration;
import java.util.UUID;
import org.jspecify.annotations.Nullable;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.stereotype.Service;
import org.springframework.transaction.reactive.TransactionalOperator;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.util.retry.Retry;

/**
 * Engine incarnations for the other features: lookups with ownership, the guarded state machine,
 * and the engine's own reports (heartbeat, drain, exit). Every transition is a conditional update
 * that bumps the fencing epoch, is audited in the same transaction and is published as an {@link
 * IncarnationStateChanged} after commit.
 */
@Service
public class Incarnations {

    static final String SUBJECT_TYPE = "incarnation";
    private static final int MAX_RACES = 5;

    private final IncarnationStore store;
    private final TransactionalOperator tx;
    private final AuditTrail audit;
    private final ApplicationEventPublisher events;
    private final Clock clock;

    Incarnations(
            IncarnationStore store,
            TransactionalOperator tx,
            AuditTrail audit,
            ApplicationEventPublisher events,
            Clock clock) {
        this.store = store;
        this.tx = tx;
        this.audit = audit;
        this.events = events;
        this.clock = clock;
    }

    /** The incarnation with its ranks, or {@link NoSuchIncarnationException}. */
    public Mono<IncarnationView> find(UUID id) {
        return store.find(id).switchIfEmpty(Mono.error(() -> new NoSuchIncarnationException(id)));
    }

    /**
     * The incarnation if the principal may act on it: operators on all, an engine on those it
     * registered, an agent on those of its host. Otherwise {@link NoSuchIncarnationException}, so
     * a token cannot probe for other engines' incarnations: not by the answer, and not by its time
     * (an unknown and a foreign id run the same single statement).
     */
    public Mono<IncarnationView> requireOwned(UUID id, ApiPrincipal principal) {
        return store.findVisible(id, principal).switchIfEmpty(Mono.error(() -> new NoSuchIncarnationException(id)));
    }

    private static boolean visibleTo(String ownerSubject, String hostId, ApiPrincipal p) {
        return switch (p.role()) {
            case OPERATOR -> true;
            case ENGINE -> ownerSubject.equals(p.subject());
            case AGENT -> hostId.equals(p.agentHost());
            case ROUTER -> false;
        };
    }

    /**
     * As {@link #requireOwned}, reading only the incarnation's own row (one statement, no ranks):
     * for the command channel, which checks ownership and epoch on every poll and acknowledgement.
     */
    public Mono<IncarnationOwnership> requireOwnership(UUID id, ApiPrincipal principal) {
        return store.ownership(id)
                .filter(o -> visibleTo(o.ownerSubject(), o.hostId(), principal))
                .switchIfEmpty(Mono.error(() -> new NoSuchIncarnationException(id)));
    }

    /** Incarnations visible to the principal that match the filter, newest first. */
    public Flux<IncarnationView> list(
            @Nullable IncarnationState state,
            @Nullable EngineRole role,
            @Nullable String domainId,
            @Nullable String hostId,
            ApiPrincipal principal,
            int limit) {
        return store.list(new IncarnationStore.Filter(state, role, domainId, hostId), principal, limit);
    }

    /**
     * Moves an incarnation from {@code expected} to {@code next} (for sweepers and cleanup). Fails
     * with {@link IllegalTransitionException} when the edge is not in the state machine or the
     * incarnation is no longer in {@code expected}.
     */
    public Mono<IncarnationStateChanged> transition(
            UUID id, IncarnationState expected, IncarnationState next, String actor, @Nullable String reason) {
        if (!expected.canMoveTo(next)) {
            return Mono.error(new IllegalTransitionException(id, expected, next));
        }
        return move(id, expected, next, null, false, actor, reason)
                .switchIfEmpty(Mono.defer(() -> find(id).flatMap(
                                current -> Mono.error(new IllegalTransitionException(id, current.state(), next)))));
    }

    /**
     * An engine's heartbeat: REGISTERED or SUSPECT become READY (a missed heartbeat is never proof
     * of death); READY and DRAINING just record it; a LOST incarnation never comes back.
     */
    public Mono<StateReport> heartbeat(UUID id, ApiPrincipal engine, @Nullable Long epoch) {
        // the common case is one conditional UPDATE; anything else takes the checked path
        return store.touch(id, ownerFilter(engine), epoch, clock.instant())
                .switchIfEmpty(Mono.defer(() -> requireOwned(id, engine).flatMap(current -> {
                    checkEpoch(current, epoch);
                    return switch (current.state()) {
                        case REGISTERED, SUSPECT -> report(id, current, READY, true, engine.actor(), "heartbeat");
                        case READY, DRAINING ->
                            store.touch(id, null, current.fencingEpoch(), clock.instant())
                                    .switchIfEmpty(Mono.error(Race::new));
                        case LOST, RECLAIM_PENDING, RECLAIMED ->
                            Mono.error(RegistrationProblems.lost(id, current.state()));
                        case EXITED -> Mono.error(new IllegalTransitionException(id, EXITED, READY));
                    };
                })))
                .retryWhen(races());
    }

    /** READY → DRAINING; already DRAINING answers as is. */
    public Mono<StateReport> drain(UUID id, ApiPrincipal engine, @Nullable Long epoch, @Nullable String reason) {
        return Mono.defer(() -> requireOwned(id, engine).flatMap(current -> {
                    checkEpoch(current, epoch);
                    return switch (current.state()) {
                        case DRAINING -> Mono.just(new StateReport(id, DRAINING, current.fencingEpoch()));
                        case READY -> report(id, current, DRAINING, false, engine.actor(), reason);
                        default -> Mono.error(refusal(id, current.state(), DRAINING));
                    };
                }))
                .retryWhen(races());
    }

    /** A clean exit: the ranks stop being live and the stable name is free. Repeating it answers as is. */
    public Mono<StateReport> exit(UUID id, ApiPrincipal engine, @Nullable Long epoch, @Nullable String reason) {
        return Mono.defer(() -> requireOwned(id, engine).flatMap(current -> {
                    checkEpoch(current, epoch);
                    if (current.state() == EXITED) {
                        return Mono.just(new StateReport(id, EXITED, current.fencingEpoch()));
                    }
                    return current.state().canMoveTo(EXITED)
                            ? report(id, current, EXITED, false, engine.actor(), reason)
                            : Mono.error(refusal(id, current.state(), EXITED));
                }))
                .retryWhen(races());
    }

    private Mono<StateReport> report(
            UUID id,
            IncarnationView current,
            IncarnationState next,
            boolean heartbeat,
            String actor,
            @Nullable String reason) {
        return move(id, current.state(), next, current.fencingEpoch(), heartbeat, actor, reason)
                .map(c -> new StateReport(id, c.to(), c.fencingEpoch()))
                .switchIfEmpty(Mono.error(Race::new));
    }

    /** The conditional move, audited in its transaction and published after commit; empty if lost a race. */
    private Mono<IncarnationStateChanged> move(
            UUID id,
            IncarnationState from,
            IncarnationState to,
            @Nullable Long epoch,
            boolean heartbeat,
            String actor,
            @Nullable String reason) {
        return store.transition(id, from, to, epoch, heartbeat, clock.instant())
                .flatMap(newEpoch -> audit.record(AuditEntry.transition(
                                        actor, SUBJECT_TYPE, id.toString(), from.name(), to.name(), newEpoch)
                                .withReason(reason))
                        .thenReturn(new IncarnationStateChanged(id, from, to, newEpoch)))
                .as(tx::transactional)
                .doOnNext(events::publishEvent);
    }

    private static KvReuseException refusal(UUID id, IncarnationState current, IncarnationState wanted) {
        return current.isLost()
                ? RegistrationProblems.lost(id, current)
                : new IllegalTransitionException(id, current, wanted);
    }

    private static void checkEpoch(IncarnationView current, @Nullable Long epoch) {
        if (epoch != null && epoch != current.fencingEpoch()) {
            throw new StaleEpochException(current.incarnationId(), epoch, current.fencingEpoch(), current.state());
        }
    }

    private static @Nullable String ownerFilter(ApiPrincipal p) {
        return p.isOperator() ? null : p.subject();
    }

    private static Retry races() {
        return Retry.backoff(MAX_RACES, Duration.ofMillis(2))
                .filter(Race.class::isInstance)
                .onRetryExhaustedThrow((spec, signal) -> new KvReuseException(
                                ProblemType.CONCURRENT_CHANGE,
                                "the incarnation kept changing under this request; retry")
                        .with("retryable", true));
    }

    /** Lost a conditional update to a concurrent change: read again and decide again. */
    private static final class Race extends RuntimeException {
        Race() {
            super("incarnation changed concurrently", null, false, false);
        }
    }
}
