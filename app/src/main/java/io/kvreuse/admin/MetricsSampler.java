package io.kvreuse.admin;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.distribution.HistogramSnapshot;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Map;
import java.util.TreeMap;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;

/**
 * Takes the overview's time-series points: selection rates and latency from this replica's meters,
 * bytes moved and predicted versus realised gain from PostgreSQL (fleet-wide). Keeps the last
 * {@code kvreuse.admin.samples-kept} points in memory.
 */
@Component
class MetricsSampler {

    static final Duration GAIN_WINDOW = Duration.ofMinutes(5);

    /** The newest leases of the window that the mean gain is taken over: a busy fleet makes thousands a second. */
    static final int GAIN_SAMPLE = 2_000;

    private static final Log log = LogFactory.getLog(MetricsSampler.class);

    private final MeterRegistry meters;
    private final DatabaseClient db;
    private final Clock clock;
    private final TimeSeries series;
    private @Nullable State previous;

    MetricsSampler(MeterRegistry meters, DatabaseClient db, Clock clock, AdminProperties props) {
        this.meters = meters;
        this.db = db;
        this.clock = clock;
        this.series = new TimeSeries(props.samplesKept());
    }

    TimeSeries series() {
        return series;
    }

    @Scheduled(
            fixedDelayString = "${kvreuse.admin.sample-interval:5s}",
            initialDelayString = "${kvreuse.admin.sample-interval:5s}")
    Mono<Void> scheduledSample() {
        return sample().onErrorResume(e -> {
            log.debug("overview sample failed; retrying next interval: " + e);
            return Mono.empty();
        });
    }

    /** Takes one point now. */
    Mono<Void> sample() {
        return Mono.defer(() -> {
                    Instant now = clock.instant();
                    State current = readMeters(now);
                    State before = previous;
                    Instant since = before == null ? now : before.at();
                    return Mono.zip(bytesMoved(since, now), gains(now)).doOnNext(db -> {
                        synchronized (this) {
                            series.add(point(before, current, db.getT1(), db.getT2()));
                            previous = current;
                        }
                    });
                })
                .then();
    }

    private TimeSeries.Sample point(@Nullable State before, State now, long bytes, Gains gains) {
        double seconds = before == null
                ? 0
                : Math.max(0.001, Duration.between(before.at(), now.at()).toMillis() / 1000.0);
        @Nullable Double[] v = new Double[TimeSeries.SERIES.size()];
        if (before != null) {
            v[0] = (now.hints() - before.hints()) / seconds;
            v[1] = (now.noHints() - before.noHints()) / seconds;
            if (now.latency() != null && before.latency() != null) {
                v[2] = HistogramDelta.quantileMs(before.latency(), now.latency(), 0.5);
                v[3] = HistogramDelta.quantileMs(before.latency(), now.latency(), 0.99);
            }
            v[4] = bytes / seconds;
        }
        v[5] = gains.predictedMs();
        v[6] = gains.realisedMs();
        return new TimeSeries.Sample(now.at().getEpochSecond(), v);
    }

    /** Hints, and no-hints by reason, since this replica started (the counters are cumulative). */
    Map<String, Double> decisionsByReason() {
        Map<String, Double> out = new TreeMap<>();
        for (Counter c : meters.find("kvreuse.selection.decisions")
                .tag("decision", "HINT")
                .counters()) {
            out.merge("HINT", c.count(), Double::sum);
        }
        for (Counter c : meters.find("kvreuse.selection.no.hints").counters()) {
            String reason = c.getId().getTag("reason");
            out.merge(reason == null ? "?" : reason, c.count(), Double::sum);
        }
        return out;
    }

    private State readMeters(Instant now) {
        double hints = 0;
        double noHints = 0;
        for (Counter c : meters.find("kvreuse.selection.decisions").counters()) {
            if ("HINT".equals(c.getId().getTag("decision"))) {
                hints += c.count();
            } else {
                noHints += c.count();
            }
        }
        Timer latency = meters.find("kvreuse.selection.latency").timer();
        return new State(now, hints, noHints, latency == null ? null : latency.takeSnapshot());
    }

    private Mono<Long> bytesMoved(Instant since, Instant until) {
        return db.sql("""
                        SELECT coalesce(sum(bytes_moved), 0) AS bytes FROM transfer_part
                        WHERE state IN ('DONE', 'QUIESCED') AND updated_at > :since AND updated_at <= :until
                        """)
                .bind("since", since.atOffset(ZoneOffset.UTC))
                .bind("until", until.atOffset(ZoneOffset.UTC))
                .map((row, meta) -> ((Number) row.get("bytes")).longValue())
                .one()
                .defaultIfEmpty(0L);
    }

    /**
     * Mean gain per delivered lease among the newest {@link #GAIN_SAMPLE} leases created in the last
     * {@link #GAIN_WINDOW} (read backwards along the creation-time index): predicted (recompute
     * minus predicted transfer) against realised (recompute minus the slowest rank's measured transfer).
     */
    private Mono<Gains> gains(Instant now) {
        return db.sql("""
                        SELECT avg(l.predicted_recompute_ms - l.predicted_transfer_ms) AS predicted,
                               avg(l.predicted_recompute_ms - t.ms) AS realised
                        FROM (SELECT lease_id, predicted_recompute_ms, predicted_transfer_ms, state FROM lease
                              WHERE created_at >= :since ORDER BY created_at DESC LIMIT :sample) l
                        JOIN LATERAL (SELECT max(p.duration_us) / 1000.0 AS ms FROM transfer_order o
                                      JOIN transfer_part p ON p.order_id = o.order_id
                                      WHERE o.lease_id = l.lease_id AND p.state IN ('DONE', 'QUIESCED')) t ON t.ms IS NOT NULL
                        WHERE l.state IN ('DELIVERED', 'COMMITTED', 'RELEASING', 'RELEASED')
                        """)
                .bind("sample", GAIN_SAMPLE)
                .bind("since", now.minus(GAIN_WINDOW).atOffset(ZoneOffset.UTC))
                .map((row, meta) -> new Gains(number(row.get("predicted")), number(row.get("realised"))))
                .one()
                .defaultIfEmpty(new Gains(null, null));
    }

    private static @Nullable Double number(@Nullable Object o) {
        return o instanceof Number n ? n.doubleValue() : null;
    }

    private record State(
            Instant at,
            double hints,
            double noHints,
            @Nullable HistogramSnapshot latency) {}

    private record Gains(
            @Nullable Double predictedMs, @Nullable Double realisedMs) {}
}
