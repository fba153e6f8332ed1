package io.kvreuse.agent;

import io.kvreuse.protocol.PartReport;
import io.kvreuse.protocol.PartState;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * Part reports on their way to the control plane, retried until it acknowledges them. Only the
 * latest report of a part is kept (RUNNING may be overtaken by DONE; UNCERTAIN by QUIESCED), so a
 * control plane that was down hears where each part is now. The last report of every unfinished
 * part is sent again after each re-registration, under the new epoch.
 *
 * <p>A report leaves the outbox only when the control plane acknowledged that very report (an
 * answer naming its order and rank; an empty 2xx is no acknowledgement) or refused it for good. One
 * still waiting is counted in {@code kvreuse.agent.reports.pending} and {@code
 * kvreuse.agent.reports.oldest.age}, and logged at INFO with its age and attempts while it waits.
 */
final class ReportOutbox implements PartReports, AutoCloseable {

    private static final Log log = LogFactory.getLog(ReportOutbox.class);

    /** Undelivered reports are logged at most this often. */
    static final Duration LOG_EVERY = Duration.ofSeconds(30);

    record PartKey(UUID orderId, int rank) {}

    /**
     * The report to send for a part, since when the part has had one waiting, how often it was sent
     * and why the last attempt failed.
     */
    record Pending(
            PartReport report,
            Instant since,
            int attempts,
            @Nullable String lastError) {

        Pending failed(String error) {
            return new Pending(report, since, attempts + 1, error);
        }
    }

    private final ControlPlaneClient client;
    private final AgentSession session;
    private final Clock clock;
    private final Map<PartKey, Pending> pending = new ConcurrentHashMap<>();
    private final Map<PartKey, PartReport> unfinished = new ConcurrentHashMap<>();
    private final Sinks.Many<Boolean> wakeups = Sinks.many().multicast().directBestEffort();
    private final Duration retryEvery;
    private final AtomicReference<Instant> lastLogged = new AtomicReference<>(Instant.MIN);
    private @Nullable Disposable loop;

    ReportOutbox(ControlPlaneClient client, AgentSession session, Duration retryEvery, Clock clock) {
        this.client = client;
        this.session = session;
        this.retryEvery = retryEvery;
        this.clock = clock;
    }

    /** Serves the outbox's pending count and the age of its oldest report. */
    ReportOutbox metrics(MeterRegistry registry) {
        Gauge.builder("kvreuse.agent.reports.pending", this, ReportOutbox::pendingCount)
                .description("part reports the control plane has not acknowledged yet")
                .register(registry);
        Gauge.builder(
                        "kvreuse.agent.reports.oldest.age",
                        this,
                        o -> o.oldestAge().toMillis() / 1000.0)
                .description("how long the oldest unacknowledged part report has waited (0 when none)")
                .baseUnit("seconds")
                .register(registry);
        return this;
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
        Instant now = clock.instant();
        pending.merge(key, new Pending(report, now, 0, null), (old, next) -> new Pending(report, old.since(), 0, null));
        if (state.isFinal()) {
            unfinished.remove(key);
        } else {
            unfinished.put(key, report);
        }
        wake();
    }

    /** After a re-registration: the control plane must hear the unfinished parts again. */
    void resendUnfinished() {
        Instant now = clock.instant();
        unfinished.forEach((key, report) -> pending.putIfAbsent(key, new Pending(report, now, 0, null)));
        wake();
    }

    private void wake() {
        // a wakeup emitted concurrently by another thread fails fast; the retry tick sends this report then
        wakeups.tryEmitNext(true);
    }

    int pendingCount() {
        return pending.size();
    }

    /** How long the oldest unacknowledged report has waited; zero when none waits. */
    Duration oldestAge() {
        Instant now = clock.instant();
        return pending.values().stream()
                .map(Pending::since)
                .min(Comparator.naturalOrder())
                .map(since -> Duration.between(since, now))
                .filter(d -> !d.isNegative())
                .orElse(Duration.ZERO);
    }

    void start() {
        loop = Flux.merge(wakeups.asFlux(), Flux.interval(retryEvery).map(t -> true))
                .onBackpressureDrop()
                .concatMap(
                        w -> flush().onErrorResume(e -> {
                            // never the end of delivery: the next wakeup or tick tries again
                            log.error("part report delivery pass failed; retrying: " + e, e);
                            return Mono.empty();
                        }),
                        1)
                .subscribe();
    }

    /** Sends every pending report once, in no particular order across parts. */
    Mono<Void> flush() {
        return Flux.defer(() -> {
                    List<Map.Entry<PartKey, Pending>> snapshot = new ArrayList<>();
                    pending.forEach((k, v) -> snapshot.add(Map.entry(k, v)));
                    return Flux.fromIterable(snapshot);
                })
                .concatMap(e -> send(e.getKey(), e.getValue().report()))
                .then(Mono.fromRunnable(this::logUndelivered));
    }

    private Mono<Void> send(PartKey key, PartReport report) {
        return session.epoch()
                .flatMap(epoch -> client.report(key.orderId(), key.rank(), report.withEpoch(epoch))
                        .then(Mono.fromRunnable(() -> delivered(key, report)))
                        .onErrorResume(ControlPlaneException.class, e -> refused(key, report, epoch, e))
                        .onErrorResume(e -> {
                            attempted(key, report, String.valueOf(e.getMessage()));
                            log.debug("report " + report.state() + " of " + key + " not delivered yet: "
                                    + e.getMessage());
                            return Mono.empty();
                        }))
                .then();
    }

    /** Acknowledged: gone from the outbox, unless a newer report of the part arrived meanwhile. */
    private void delivered(PartKey key, PartReport report) {
        pending.computeIfPresent(key, (k, p) -> p.report() == report ? null : p);
    }

    private void attempted(PartKey key, PartReport report, String error) {
        pending.computeIfPresent(key, (k, p) -> p.report() == report ? p.failed(error) : p);
    }

    private Mono<Void> refused(PartKey key, PartReport report, long epoch, ControlPlaneException e) {
        attempted(key, report, e.getMessage());
        if (e.needsRegistration()) {
            session.invalidate(epoch);
        } else if (!e.isTransient()) {
            // the control plane will never accept this report (part already final, order unknown): stop sending it
            log.warn("report " + report.state() + " of order " + key.orderId() + " rank " + key.rank() + " refused: "
                    + e.getMessage());
            pending.computeIfPresent(key, (k, p) -> p.report() == report ? null : p);
            if (report.state().isFinal() || e.status() == 404) {
                unfinished.remove(key);
            }
        }
        return Mono.empty();
    }

    /** At INFO, at most every {@link #LOG_EVERY}: how many reports wait, and the oldest few with their age and attempts. */
    private void logUndelivered() {
        Instant now = clock.instant();
        Instant last = lastLogged.get();
        List<Map.Entry<PartKey, Pending>> waiting = new ArrayList<>();
        pending.forEach((k, v) -> {
            if (v.attempts() > 0) {
                waiting.add(Map.entry(k, v));
            }
        });
        if (waiting.isEmpty()
                || Duration.between(last, now).compareTo(LOG_EVERY) < 0
                || !lastLogged.compareAndSet(last, now)) {
            return;
        }
        waiting.sort(Comparator.comparing(e -> e.getValue().since()));
        StringBuilder s = new StringBuilder()
                .append(waiting.size())
                .append(" part report(s) not acknowledged by the control plane yet; retrying every ")
                .append(retryEvery)
                .append(". Oldest:");
        for (Map.Entry<PartKey, Pending> e : waiting.subList(0, Math.min(3, waiting.size()))) {
            Pending p = e.getValue();
            s.append(" [")
                    .append(p.report().state())
                    .append(" of order ")
                    .append(e.getKey().orderId())
                    .append(" rank ")
                    .append(e.getKey().rank())
                    .append(", waiting ")
                    .append(Duration.between(p.since(), now).toSeconds())
                    .append(" s, ")
                    .append(p.attempts())
                    .append(" attempt(s), last: ")
                    .append(p.lastError())
                    .append(']');
        }
        log.info(s);
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
