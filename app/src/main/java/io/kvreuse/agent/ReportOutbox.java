package io.kvreuse.agent;

import io.kvreuse.protocol.PartReport;
import io.kvreuse.protocol.PartState;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * Part reports on their way to the control plane, retried until it answers. Only the latest report
 * of a part is kept (RUNNING may be overtaken by DONE; UNCERTAIN by QUIESCED), so a control plane
 * that was down hears where each part is now. The last report of every unfinished part is sent
 * again after each re-registration, under the new epoch.
 */
final class ReportOutbox implements PartReports, AutoCloseable {

    private static final Log log = LogFactory.getLog(ReportOutbox.class);

    record PartKey(UUID orderId, int rank) {}

    private final ControlPlaneClient client;
    private final AgentSession session;
    private final Map<PartKey, PartReport> pending = new ConcurrentHashMap<>();
    private final Map<PartKey, PartReport> unfinished = new ConcurrentHashMap<>();
    private final Sinks.Many<Boolean> wakeups = Sinks.many().multicast().directBestEffort();
    private final Duration retryEvery;
    private @Nullable Disposable loop;

    ReportOutbox(ControlPlaneClient client, AgentSession session, Duration retryEvery) {
        this.client = client;
        this.session = session;
        this.retryEvery = retryEvery;
    }

    @Override
    public void report(
            UUID orderId,
            int rank,
            PartState state,
            long bytes,
            long durationUs,
            @Nullable Integer nativeStatus,
            @Nullable String detail) {
        PartKey key = new PartKey(orderId, rank);
        PartReport report = new PartReport(state, bytes, durationUs, nativeStatus, truncate(detail), 0L);
        pending.put(key, report);
        if (state.isFinal()) {
            unfinished.remove(key);
        } else {
            unfinished.put(key, report);
        }
        wakeups.tryEmitNext(true);
    }

    /** After a re-registration: the control plane must hear the unfinished parts again. */
    void resendUnfinished() {
        unfinished.forEach(pending::putIfAbsent);
        wakeups.tryEmitNext(true);
    }

    int pendingCount() {
        return pending.size();
    }

    void start() {
        loop = Flux.merge(wakeups.asFlux(), Flux.interval(retryEvery).map(t -> true))
                .onBackpressureDrop()
                .concatMap(w -> flush(), 1)
                .subscribe();
    }

    /** Sends every pending report once, in no particular order across parts. */
    Mono<Void> flush() {
        return Flux.fromIterable(Map.copyOf(pending).entrySet())
                .concatMap(e -> send(e.getKey(), e.getValue()))
                .then();
    }

    private Mono<Void> send(PartKey key, PartReport report) {
        return session.epoch()
                .flatMap(epoch -> client.report(key.orderId(), key.rank(), report.withEpoch(epoch))
                        .doOnSuccess(v -> pending.remove(key, report))
                        .onErrorResume(ControlPlaneException.class, e -> refused(key, report, epoch, e))
                        .onErrorResume(e -> {
                            log.debug("report " + report.state() + " of " + key + " not delivered yet: "
                                    + e.getMessage());
                            return Mono.empty();
                        }));
    }

    private Mono<Void> refused(PartKey key, PartReport report, long epoch, ControlPlaneException e) {
        if (e.needsRegistration()) {
            session.invalidate(epoch);
        } else if (!e.isTransient()) {
            // the control plane will never accept this report (part already final, order unknown): stop sending it
            log.warn("report " + report.state() + " of order " + key.orderId() + " rank " + key.rank() + " refused: "
                    + e.getMessage());
            pending.remove(key, report);
            if (report.state().isFinal() || e.status() == 404) {
                unfinished.remove(key);
            }
        }
        return Mono.empty();
    }

    private static @Nullable String truncate(@Nullable String detail) {
        return detail == null || detail.length() <= 2000 ? detail : detail.substring(0, 1997) + "...";
    }

    @Override
    public void close() {
        if (loop != null) {
            loop.dispose();
        }
    }
}
