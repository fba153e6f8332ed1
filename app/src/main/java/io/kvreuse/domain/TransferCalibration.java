package io.kvreuse.domain;

import java.time.ZoneOffset;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.stereotype.Component;
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
public class TransferCalibration {

    /** Weight of a new sample: about the last 20 transfers dominate. */
    static final double ALPHA = 0.05;

    private final DatabaseClient db;
    private final java.time.Clock clock;
    private final org.springframework.transaction.reactive.TransactionalOperator tx;

    TransferCalibration(
            DatabaseClient db,
            java.time.Clock clock,
            org.springframework.transaction.reactive.TransactionalOperator tx) {
        this.db = db;
        this.clock = clock;
        this.tx = tx;
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

    private record Sample(String transport, long bytes, double ms) {}

    // samples wait here and are folded in by flush(), so hot delivery transactions never queue on
    // the domain's calibration row; a crash loses at most one interval of samples
    private final java.util.concurrent.ConcurrentLinkedQueue<java.util.Map.Entry<String, Sample>> pending =
            new java.util.concurrent.ConcurrentLinkedQueue<>();

    /**
     * Queues one delivered transfer of the domain (bytes moved per rank, realised milliseconds) for
     * the next {@link #flush}; samples without bytes or time are ignored. Never touches the store.
     */
    public Mono<Void> sample(String domainId, String transport, long bytesPerRank, double realisedMs) {
        if (bytesPerRank > 0 && realisedMs > 0) {
            pending.add(java.util.Map.entry(domainId, new Sample(transport, bytesPerRank, realisedMs)));
        }
        return Mono.empty();
    }

    /** Folds the pending samples into each domain's moments and cost model, one transaction per domain. */
    @org.springframework.scheduling.annotation.Scheduled(fixedDelayString = "${kvreuse.leases.calibration-interval:1s}")
    void scheduledFlush() {
        flush().subscribe(
                        null,
                        e -> org.apache.commons.logging.LogFactory.getLog(TransferCalibration.class)
                                .warn("calibration flush failed: " + e.getMessage()));
    }

    /** Applies every pending sample now. */
    public Mono<Void> flush() {
        java.util.Map<String, java.util.List<Sample>> byDomain = new java.util.LinkedHashMap<>();
        for (var e = pending.poll(); e != null; e = pending.poll()) {
            byDomain.computeIfAbsent(e.getKey(), k -> new java.util.ArrayList<>())
                    .add(e.getValue());
        }
        return reactor.core.publisher.Flux.fromIterable(byDomain.entrySet())
                .concatMap(e -> apply(e.getKey(), e.getValue()).as(tx::transactional))
                .then();
    }

    private Mono<Void> apply(String domainId, java.util.List<Sample> samples) {
        String transport = samples.getFirst().transport();
        Mono<Moments> current = db.sql("SELECT * FROM transfer_calibration WHERE domain_id = :d FOR UPDATE")
                .bind("d", domainId)
                .map((r, m) -> new Moments(
                        r.get("mean_x", Double.class),
                        r.get("mean_y", Double.class),
                        r.get("mean_xx", Double.class),
                        r.get("mean_xy", Double.class),
                        r.get("samples", Long.class)))
                .one()
                .defaultIfEmpty(new Moments(0, 0, 0, 0, 0));
        Mono<CostModel> prior = db.sql("SELECT * FROM domain_cost_model WHERE domain_id = :d FOR UPDATE")
                .bind("d", domainId)
                .map((r, m) -> new CostModel(
                        r.get("prefill_ms_per_token", Double.class),
                        r.get("prefill_ms_per_token_sq", Double.class),
                        r.get("transfer_setup_ms", Double.class),
                        r.get("transfer_gbytes_per_s", Double.class)))
                .one()
                .defaultIfEmpty(CostModel.defaults(transport));
        return current.zipWith(prior).flatMap(t -> {
            Moments next = t.getT1();
            for (Sample s : samples) {
                next = next.add(s.bytes(), s.ms());
            }
            CostModel fitted = next.fit(t.getT2());
            return store(domainId, next).then(model(domainId, fitted, next.samples()));
        });
    }

    private Mono<Void> store(String domainId, Moments m) {
        return db.sql("""
                        INSERT INTO transfer_calibration (domain_id, weight, mean_x, mean_y, mean_xx, mean_xy, samples, updated_at)
                        VALUES (:d, :w, :x, :y, :xx, :xy, :n, :now)
                        ON CONFLICT (domain_id) DO UPDATE SET weight = :w, mean_x = :x, mean_y = :y, mean_xx = :xx,
                            mean_xy = :xy, samples = :n, updated_at = :now
                        """)
                .bind("d", domainId)
                .bind("w", ALPHA)
                .bind("x", m.x())
                .bind("y", m.y())
                .bind("xx", m.xx())
                .bind("xy", m.xy())
                .bind("n", m.samples())
                .bind("now", clock.instant().atOffset(ZoneOffset.UTC))
                .then();
    }

    private Mono<Void> model(String domainId, CostModel c, long samples) {
        return db.sql("""
                        INSERT INTO domain_cost_model (domain_id, prefill_ms_per_token, prefill_ms_per_token_sq, transfer_setup_ms,
                            transfer_gbytes_per_s, samples, updated_at, updated_by)
                        VALUES (:d, :p, :pq, :setup, :gbps, :n, :now, 'system:calibration')
                        ON CONFLICT (domain_id) DO UPDATE SET transfer_setup_ms = :setup, transfer_gbytes_per_s = :gbps,
                            samples = :n, updated_at = :now, updated_by = 'system:calibration'
                        """)
                .bind("d", domainId)
                .bind("p", c.prefillMsPerToken())
                .bind("pq", c.prefillMsPerTokenSq())
                .bind("setup", c.transferSetupMs())
                .bind("gbps", c.transferGbytesPerS())
                .bind("n", samples)
                .bind("now", clock.instant().atOffset(ZoneOffset.UTC))
                .then();
    }
}
