package io.kvreuse.agent;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import reactor.core.publisher.Mono;
import reactor.util.retry.Retry;

/**
 * This agent's registration with the control plane. Every report carries the current agent epoch;
 * a control plane that no longer accepts it (restarted onto another database, or a newer
 * registration) makes the session register again, retrying with backoff for as long as it takes.
 * Concurrent callers share one registration attempt.
 */
final class AgentSession {

    private static final Log log = LogFactory.getLog(AgentSession.class);

    private final ControlPlaneClient client;
    private final GpuAgents gpus;
    private final Duration backoff;
    private final Duration maxBackoff;
    private final AtomicLong epoch = new AtomicLong();
    private final AtomicReference<Mono<Long>> registering = new AtomicReference<>();
    private final AtomicLong registrations = new AtomicLong();
    private volatile Runnable onRegistered = () -> {};

    AgentSession(ControlPlaneClient client, GpuAgents gpus, Duration backoff, Duration maxBackoff) {
        this.client = client;
        this.gpus = gpus;
        this.backoff = backoff;
        this.maxBackoff = maxBackoff;
    }

    /** Called after every successful (re-)registration, e.g. to re-report unfinished parts. */
    void onRegistered(Runnable callback) {
        this.onRegistered = callback;
    }

    /** The current epoch, registering first when there is none. */
    Mono<Long> epoch() {
        long current = epoch.get();
        if (current > 0) {
            return Mono.just(current);
        }
        return registering.updateAndGet(r -> r != null ? r : register()).doFinally(s -> registering.set(null));
    }

    long currentEpoch() {
        return epoch.get();
    }

    long registrations() {
        return registrations.get();
    }

    /** Forgets {@code stale} (if still current) so the next call registers again. */
    void invalidate(long stale) {
        if (epoch.compareAndSet(stale, 0)) {
            log.warn("the control plane no longer accepts agent epoch " + stale + ": registering again");
        }
    }

    private Mono<Long> register() {
        return Mono.defer(() -> client.register(gpus.registration()))
                .retryWhen(Retry.backoff(Long.MAX_VALUE, backoff)
                        .maxBackoff(maxBackoff)
                        .doBeforeRetry(s -> log.warn("registration with the control plane failed (attempt "
                                + (s.totalRetries() + 1) + "): " + s.failure().getMessage())))
                .doOnNext(e -> {
                    epoch.set(e);
                    registrations.incrementAndGet();
                    log.info("registered with the control plane: NIXL agents " + gpus.names() + ", agent epoch " + e);
                    onRegistered.run();
                })
                .cache();
    }
}
