package io.kvreuse.lease;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.EnumMap;
import java.util.Map;
import org.springframework.stereotype.Component;

/** Lease metrics: transitions, refused stale reports, reused blocks, predicted vs realised transfer time. */
@Component
class LeaseMetrics {

    private final MeterRegistry meters;
    private final Map<LeaseState, Counter> transitions = new EnumMap<>(LeaseState.class);
    private final Counter reused;
    private final DistributionSummary predicted;
    private final DistributionSummary realised;
    private final DistributionSummary ratio;

    LeaseMetrics(MeterRegistry meters) {
        this.meters = meters;
        for (LeaseState s : LeaseState.values()) {
            transitions.put(s, meters.counter("kvreuse.lease.transitions", "to", s.name()));
        }
        reused = Counter.builder("kvreuse.lease.reused.blocks")
                .description("blocks committed by targets instead of recomputed")
                .register(meters);
        predicted = summary(
                "kvreuse.lease.transfer.predicted", "milliseconds", "predicted transfer time of delivered leases");
        realised = summary("kvreuse.lease.transfer.realised", "milliseconds", "realised transfer time (slowest rank)");
        ratio = summary("kvreuse.lease.transfer.realised.ratio", null, "realised over predicted transfer time");
    }

    private DistributionSummary summary(String name, String unit, String description) {
        return DistributionSummary.builder(name)
                .baseUnit(unit)
                .description(description)
                .publishPercentileHistogram()
                .register(meters);
    }

    void transition(LeaseState to) {
        transitions.get(to).increment();
    }

    /** A report refused for a stale epoch; {@code kind} says whose (incarnation, lease, bank, agent). */
    void stale(String kind) {
        meters.counter("kvreuse.lease.stale.reports", "kind", kind).increment();
    }

    void delivered(double predictedMs, double realisedMs) {
        predicted.record(predictedMs);
        realised.record(realisedMs);
        if (predictedMs > 0) {
            ratio.record(realisedMs / predictedMs);
        }
    }

    void committed(int blocks) {
        reused.increment(blocks);
    }
}
