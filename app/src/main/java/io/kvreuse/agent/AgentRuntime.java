package io.kvreuse.agent;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.context.SmartLifecycle;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.util.retry.Retry;

/**
 * The agent's loops: register, heartbeat, long-poll orders and deliver reports, each retrying with
 * backoff for as long as the control plane is away, so a restart of the control plane costs a few
 * retries and nothing else. A stale epoch or an unknown host makes the session register again.
 * Before its first poll, the process settles what an earlier agent process of the host left running.
 */
final class AgentRuntime implements SmartLifecycle {

    private static final Log log = LogFactory.getLog(AgentRuntime.class);

    private final AgentProperties props;
    private final AgentSession session;
    private final ControlPlaneClient client;
    private final OrderRunner runner;
    private final EarlierProcessParts earlier;
    private final LostOrders lost;
    private final ReportOutbox outbox;
    private final ExecutorService workers;
    private final GpuAgents gpus;
    private final RegionImports regions;
    private final Clock clock;
    private final Disposable.Composite loops = Disposables.composite();
    private volatile @Nullable Instant lastPoll;
    private volatile boolean running;

    AgentRuntime(
            AgentProperties props,
            AgentSession session,
            ControlPlaneClient client,
            OrderRunner runner,
            EarlierProcessParts earlier,
            LostOrders lost,
            ReportOutbox outbox,
            ExecutorService workers,
            GpuAgents gpus,
            RegionImports regions,
            Clock clock) {
        this.props = props;
        this.session = session;
        this.client = client;
        this.runner = runner;
        this.earlier = earlier;
        this.lost = lost;
        this.outbox = outbox;
        this.workers = workers;
        this.gpus = gpus;
        this.regions = regions;
        this.clock = clock;
    }

    @Override
    public void start() {
        session.onRegistered(outbox::resendUnfinished);
        outbox.start();
        loops.add(pollLoop().subscribe());
        loops.add(heartbeatLoop().subscribe());
        loops.add(lostOrderLoop().subscribe());
        running = true;
        log.info("node agent for host " + props.hostId() + " started; control plane " + props.controlPlane());
    }

    private Flux<Void> pollLoop() {
        return Mono.defer(() -> session.epoch()
                        .flatMap(epoch -> earlier.settled()
                                .then(client.orders(props.hostId()))
                                .doOnNext(orders -> {
                                    lastPoll = clock.instant();
                                    orders.forEach(runner::run);
                                })
                                .onErrorResume(ControlPlaneException.class, e -> {
                                    if (e.needsRegistration()) {
                                        session.invalidate(epoch);
                                        return Mono.empty();
                                    }
                                    return Mono.error(e);
                                })))
                .then()
                .repeat()
                .retryWhen(backoff("order poll"));
    }

    /** Looks for orders claimed for this host whose claim answer never arrived, twice per poll wait. */
    private Flux<Void> lostOrderLoop() {
        Duration every = props.pollWait().dividedBy(2).compareTo(Duration.ofSeconds(1)) < 0
                ? Duration.ofSeconds(1)
                : props.pollWait().dividedBy(2);
        return Flux.interval(every)
                .onBackpressureDrop()
                .concatMap(
                        t -> session.currentEpoch() == 0
                                ? Mono.<Void>empty()
                                : earlier.settled().then(lost.check()),
                        1);
    }

    private Flux<Void> heartbeatLoop() {
        return Flux.interval(props.heartbeatInterval())
                .onBackpressureDrop()
                .concatMap(
                        t -> {
                            long epoch = session.currentEpoch();
                            if (epoch == 0) {
                                return Mono.<Void>empty();
                            }
                            return client.heartbeat(props.hostId(), epoch).onErrorResume(e -> {
                                if (e instanceof ControlPlaneException c && c.needsRegistration()) {
                                    session.invalidate(epoch);
                                } else {
                                    log.debug("heartbeat failed: " + e.getMessage());
                                }
                                return Mono.empty();
                            });
                        },
                        1);
    }

    private Retry backoff(String what) {
        return Retry.backoff(Long.MAX_VALUE, props.retryBackoff())
                .maxBackoff(props.maxRetryBackoff())
                .transientErrors(true)
                .doBeforeRetry(
                        s -> log.warn(what + " failed, retrying: " + s.failure().getMessage()));
    }

    /** Stops polling, lets running parts finish (or quiesce) briefly, delivers what it can, then lets NIXL go. */
    @Override
    public void stop() {
        running = false;
        loops.dispose();
        workers.shutdown();
        try {
            if (!workers.awaitTermination(props.transferTimeout().toMillis() + 2_000, TimeUnit.MILLISECONDS)) {
                log.warn("parts still running at shutdown: closing NIXL cancels them");
                workers.shutdownNow();
            }
            // the shutdown thread, not an event loop: waiting here is what shutdown is for
            outbox.flush().toFuture().get(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException | RuntimeException e) {
            log.warn("could not deliver every report before shutdown: " + e.getMessage());
        } finally {
            outbox.close();
            gpus.close();
            regions.close();
        }
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    @Nullable
    Instant lastPoll() {
        return lastPoll;
    }
}
