package io.kvreuse.lease;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.springframework.stereotype.Component;

/** Lease metrics: transitions, refused stale reports, reused blocks, predicted vs realised transfer time. */
@Component
class LeaseMetrics {

    private final MeterRegistry meters;
    private final Map<LeaseState, Counter> transitions = new EnumMap<>(LeaseState.class);
    private final Counter reused;
    private final Timer predicted;
    private final Timer realised;
    private final DistributionSummary ratio;

    LeaseMetrics(MeterRegistry meters) {
        this.meters = meters;
        for (LeaseState s : LeaseState.values()) {
            transitions.put(
                    s,
                    Counter.builder("kvreuse.lease.transitions")
                            .description("lease state changes by the state entered (PROPOSED: leases written)")
                            .tag("to", s.name())
                            .register(meters));
        }
        // registered at start, so the series exist before the first stale report
        List.of("incarnation", "lease", "bank", "agent").forEach(this::staleCounter);
        reused = Counter.builder("kvreuse.lease.reused.blocks")
                .description("blocks committed by targets instead of recomputed")
                .register(meters);
        predicted = seconds("kvreuse.lease.transfer.predicted", "predicted transfer time of delivered leases");
        realised =
                seconds("kvreuse.lease.transfer.realised", "realised transfer time of delivered leases (slowest rank)");
        // buckets around 1 (as predicted): a summary's default buckets start at 1 and grow in whole numbers
        ratio = DistributionSummary.builder("kvreuse.lease.transfer.realised.ratio")
                .description("realised over predicted transfer time of delivered leases")
                .serviceLevelObjectives(0.1, 0.25, 0.5, 0.75, 0.9, 1, 1.1, 1.25, 1.5, 2, 3, 5, 10, 20)
                .register(meters);
    }

    private Counter staleCounter(String kind) {
        return Counter.builder("kvreuse.lease.stale.reports")
                .description("reports refused because they carry an old incarnation, lease, bank or agent epoch")
                .tag("kind", kind)
                .register(meters);
    }

    /** A time in seconds, with histogram buckets from 100 µs to a minute. */
    private Timer seconds(String name, String description) {
        return Timer.builder(name)
                .description(description)
                .publishPercentileHistogram()
                .minimumExpectedValue(Duration.ofNanos(100_000))
                .maximumExpectedValue(Duration.ofMinutes(1))
                .register(meters);
    }

    void transition(LeaseState to) {
        transitions.get(to).increment();
    }

    /** Leases written PROPOSED: a lease is born in that state, never moved there. */
    void proposed(int leases) {
        transitions.get(LeaseState.PROPOSED).increment(leases);
    }

    /** A report refused for a stale epoch; {@code kind} says whose (incarnation, lease, bank, agent). */
    void stale(String kind) {
        staleCounter(kind).increment();
    }

    void delivered(double predictedMs, double realisedMs) {
        predicted.record(nanos(predictedMs), TimeUnit.NANOSECONDS);
        realised.record(nanos(realisedMs), TimeUnit.NANOSECONDS);
        if (predictedMs > 0) {
            ratio.record(realisedMs / predictedMs);
        }
    }

    private static long nanos(double ms) {
        return Math.round(Math.max(0, ms) * 1_000_000);
    }

    void committed(int blocks) {
        reused.increment(blocks);
    }
}
