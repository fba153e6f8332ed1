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
            if (s == LeaseState.PROPOSED) {
                continue; // no lease moves to PROPOSED: written proposals are counted where they are written
            }
            transitions.put(
                    s,
                    Counter.builder("kvreuse.lease.transitions")
                            .description(TRANSITIONS_HELP)
                            .tag("to", s.name())
                            .register(meters));
        }
        for (String kind : STALE_KINDS) {
            staleCounter(kind);
        }
        reused = Counter.builder("kvreuse.lease.reused.blocks")
                .description("blocks committed by targets instead of recomputed")
                .register(meters);
        predicted =
                summary("kvreuse.lease.transfer.predicted", "seconds", "predicted transfer time of delivered leases");
        realised = summary(
                "kvreuse.lease.transfer.realised",
                "seconds",
                "realised transfer time of delivered leases (slowest rank)");
        ratio = summary(
                "kvreuse.lease.transfer.realised.ratio",
                null,
                "realised over predicted transfer time of delivered leases");
    }

    /** Same text as the PROPOSED series registered by the selection's proposal writer. */
    static final String TRANSITIONS_HELP = "lease state changes by the state entered (PROPOSED: leases written)";

    /** Whose stale reports are refused; registered at start so the series exist before the first one. */
    static final java.util.List<String> STALE_KINDS = java.util.List.of("incarnation", "lease", "bank", "agent");

    private Counter staleCounter(String kind) {
        return Counter.builder("kvreuse.lease.stale.reports")
                .description("reports refused because they carry an old incarnation, lease, bank or agent epoch")
                .tag("kind", kind)
                .register(meters);
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
        staleCounter(kind).increment();
    }

    void delivered(double predictedMs, double realisedMs) {
        predicted.record(predictedMs / 1000.0);
        realised.record(realisedMs / 1000.0);
        if (predictedMs > 0) {
            ratio.record(realisedMs / predictedMs);
        }
    }

    void committed(int blocks) {
        reused.increment(blocks);
    }
}
