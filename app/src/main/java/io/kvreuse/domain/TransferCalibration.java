package io.kvreuse.domain;

import java.time.Clock;
import java.time.Duration;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Calibrates a domain's transfer setup and bandwidth from delivered transfers: exponentially
 * weighted moments of (bytes per rank, realised ms), refitted as a line {@code ms = setup + bytes /
 * bandwidth} after each sample. While sizes barely vary, the setup is kept and only the bandwidth
 * follows. The fitted values go to {@code domain_cost_model}, which every replica's selection reads.
 * The domain package owns both tables; leases hand their delivered transfers in through {@link
 * #sample}.
 */
@Component
public class TransferCalibration implements DisposableBean {

    /** Weight of a new sample: about the last 20 transfers dominate. */
    static final double ALPHA = 0.05;

    private static final Log log = LogFactory.getLog(TransferCalibration.class);

    private final DatabaseClient db;
    private final Clock clock;

    TransferCalibration(DatabaseClient db, Clock clock) {
        this.db = db;
        this.clock = clock;
    }

    /** Moments of one domain. */
    record Moments(double x, double y, double xx, double xy, long samples) {
        Moments add(double bytes, double ms) {
            double a = samples == 0 ? 1.0 : Math.max(ALPHA, 1.0 / (samples + 1));
            return new Moments(
                    x + a * (bytes - x),
                    y + a * (ms - y),
                    xx + a * (bytes * bytes - xx),
                    xy + a * (bytes * ms - xy),
                    samples + 1);
        }

        /** The fitted model, starting from {@code prior} for what the samples cannot tell yet. */
        CostModel fit(CostModel prior) {
            double var = xx - x * x;
            double setup = prior.transferSetupMs();
            double slope;
            if (samples >= 3 && var > 1e-6 * x * x) {
                slope = (xy - x * y) / var;
                double intercept = y - slope * x;
                if (slope > 0 && intercept >= 0) {
                    setup = intercept;
                } else {
                    slope = y > setup ? (y - setup) / Math.max(x, 1) : 0;
                }
            } else {
                slope = y > setup ? (y - setup) / Math.max(x, 1) : 0;
            }
            double gbps = slope > 0 ? 1.0 / (slope * 1e6) : prior.transferGbytesPerS();
            return new CostModel(prior.prefillMsPerToken(), prior.prefillMsPerTokenSq(), setup, Math.min(gbps, 10_000));
        }
    }

    private record Sample(TransportClass transport, long bytes, double ms) {}

    /** A domain's moments and cost model as stored ({@code model} null: no row yet). */
    private record Stored(Moments moments, @Nullable CostModel model) {}

    // samples wait here and are folded in by flush(), so hot delivery transactions never queue on
    // the domain's calibration row; a crash loses at most one interval of samples
    private final ConcurrentLinkedQueue<Map.Entry<String, Sample>> pending = new ConcurrentLinkedQueue<>();

    // what this replica last read or wrote per domain; a write conditional on it fails when another
    // replica wrote since, and is then redone from the stored rows
    private final Map<String, Stored> known = new ConcurrentHashMap<>();

    /**
     * Queues one delivered transfer of the domain (bytes moved per rank, realised milliseconds) for
     * the next {@link #flush}; samples without bytes or time are ignored. Never touches the store.
     */
    public Mono<Void> sample(String domainId, TransportClass transport, long bytesPerRank, double realisedMs) {
        if (bytesPerRank > 0 && realisedMs > 0) {
            pending.add(Map.entry(domainId, new Sample(transport, bytesPerRank, realisedMs)));
        }
        return Mono.empty();
    }

    /** Folds the pending samples into each domain's moments and cost model. */
    @Scheduled(fixedDelayString = "${kvreuse.leases.calibration-interval:1s}")
    void scheduledFlush() {
        flush().subscribe(null, e -> log.warn("calibration flush failed: " + e.getMessage()));
    }

    /** On shutdown: what is pending is written, not lost. */
    @Override
    public void destroy() {
        flush().block(Duration.ofSeconds(5));
    }

    /**
     * Applies every pending sample now: per domain one statement without a transaction that writes
     * both rows (so one notification per domain and flush), conditional on the rows this replica
     * knows; after another replica's write, the rows are read once and the write redone.
     */
    public Mono<Void> flush() {
        Map<String, List<Sample>> byDomain = new LinkedHashMap<>();
        for (var e = pending.poll(); e != null; e = pending.poll()) {
            byDomain.computeIfAbsent(e.getKey(), k -> new ArrayList<>()).add(e.getValue());
        }
        return Flux.fromIterable(byDomain.entrySet())
                .concatMap(e -> apply(e.getKey(), e.getValue(), 5))
                .then();
    }

    private Mono<Void> apply(String domainId, List<Sample> samples, int tries) {
        TransportClass transport = samples.getFirst().transport();
        Stored cached = known.get(domainId);
        Mono<Stored> base = cached != null ? Mono.just(cached) : read(domainId);
        return base.flatMap(b -> {
            Moments next = b.moments();
            for (Sample s : samples) {
                next = next.add(s.bytes(), s.ms());
            }
            CostModel prior = b.model() == null ? CostModel.defaults(transport) : b.model();
            Stored after = new Stored(next, next.fit(prior));
            return write(domainId, b, prior, after).flatMap(written -> {
                if (written) {
                    known.put(domainId, after);
                    return Mono.<Void>empty();
                }
                known.remove(domainId);
                return tries > 1
                        ? apply(domainId, samples, tries - 1)
                        : Mono.error(new IllegalStateException("calibration of " + domainId + " kept changing"));
            });
        });
    }

    private Mono<Stored> read(String domainId) {
        return db.sql("""
                        SELECT c.mean_x, c.mean_y, c.mean_xx, c.mean_xy, c.samples, m.prefill_ms_per_token,
                            m.prefill_ms_per_token_sq, m.transfer_setup_ms, m.transfer_gbytes_per_s
                        FROM (SELECT CAST(:d AS TEXT) AS domain_id) d
                        LEFT JOIN transfer_calibration c ON c.domain_id = d.domain_id
                        LEFT JOIN domain_cost_model m ON m.domain_id = d.domain_id
                        """)
                .bind("d", domainId)
                .map((r, m) -> new Stored(
                        r.get("samples", Long.class) == null
                                ? new Moments(0, 0, 0, 0, 0)
                                : new Moments(
                                        r.get("mean_x", Double.class),
                                        r.get("mean_y", Double.class),
                                        r.get("mean_xx", Double.class),
                                        r.get("mean_xy", Double.class),
                                        r.get("samples", Long.class)),
                        r.get("transfer_setup_ms", Double.class) == null
                                ? null
                                : new CostModel(
                                        r.get("prefill_ms_per_token", Double.class),
                                        r.get("prefill_ms_per_token_sq", Double.class),
                                        r.get("transfer_setup_ms", Double.class),
                                        r.get("transfer_gbytes_per_s", Double.class))))
                .one();
    }

    /** Both rows at once, if the moments' count and the model's transfer terms are still as read. */
    private static final String WRITE = """
            WITH cal AS (
                INSERT INTO transfer_calibration (domain_id, weight, mean_x, mean_y, mean_xx, mean_xy, samples, updated_at)
                SELECT :d, :w, :x, :y, :xx, :xy, :n, :now
                WHERE NOT EXISTS (SELECT 1 FROM domain_cost_model WHERE domain_id = :d
                    AND (transfer_setup_ms, transfer_gbytes_per_s) IS DISTINCT FROM (:ps, :pg))
                  AND (:fresh OR EXISTS (SELECT 1 FROM domain_cost_model WHERE domain_id = :d))
                ON CONFLICT (domain_id) DO UPDATE SET weight = :w, mean_x = :x, mean_y = :y, mean_xx = :xx,
                    mean_xy = :xy, samples = :n, updated_at = :now
                WHERE transfer_calibration.samples = :n0
                RETURNING domain_id)
            INSERT INTO domain_cost_model (domain_id, prefill_ms_per_token, prefill_ms_per_token_sq, transfer_setup_ms,
                transfer_gbytes_per_s, samples, updated_at, updated_by)
            SELECT domain_id, :p, :pq, :setup, :gbps, :n, :now, 'system:calibration' FROM cal
            ON CONFLICT (domain_id) DO UPDATE SET transfer_setup_ms = :setup, transfer_gbytes_per_s = :gbps,
                samples = :n, updated_at = :now, updated_by = 'system:calibration'
            RETURNING domain_id
            """;

    /**
     * Writes both rows if they are still as {@code base} says: the moments' sample count (every write
     * raises it) and the model's transfer terms the fit started from. False when they were not.
     */
    private Mono<Boolean> write(String domainId, Stored base, CostModel prior, Stored after) {
        Moments m = after.moments();
        CostModel c = after.model();
        return db.sql(WRITE)
                .bind("d", domainId)
                .bind("w", ALPHA)
                .bind("x", m.x())
                .bind("y", m.y())
                .bind("xx", m.xx())
                .bind("xy", m.xy())
                .bind("n", m.samples())
                .bind("n0", base.moments().samples())
                .bind("ps", prior.transferSetupMs())
                .bind("pg", prior.transferGbytesPerS())
                .bind("fresh", base.model() == null)
                .bind("p", c.prefillMsPerToken())
                .bind("pq", c.prefillMsPerTokenSq())
                .bind("setup", c.transferSetupMs())
                .bind("gbps", c.transferGbytesPerS())
                .bind("now", clock.instant().atOffset(ZoneOffset.UTC))
                .map((r, md) -> true)
                .all()
                .hasElements();
    }
}
