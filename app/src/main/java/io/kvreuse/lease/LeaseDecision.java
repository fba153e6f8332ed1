package io.kvreuse.lease;

import io.kvreuse.domain.TransportClass;
import io.kvreuse.error.KvReuseException;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * What the decider made of one report: the lease after it, the changes to write, the audit entries
 * and the metric events. {@code problem} is the answer to give once the changes are written (a
 * refusal when there are none: nothing changed). {@code held} answers a PIN acknowledgement, {@code
 * duplicate} one that had been acknowledged before.
 */
record LeaseDecision(
        LeaseAggregate after,
        List<LeaseChange> changes,
        List<Audit> audits,
        List<Signal> signals,
        @Nullable KvReuseException problem,
        @Nullable Boolean held,
        boolean duplicate) {

    LeaseDecision {
        changes = List.copyOf(changes);
        audits = List.copyOf(audits);
        signals = List.copyOf(signals);
    }

    LeaseState state() {
        return after.row().state();
    }

    /** One audit entry of the lease: a TRANSITION (with from, to and version) or an action. */
    record Audit(
            String actor,
            String action,
            @Nullable LeaseState from,
            @Nullable LeaseState to,
            @Nullable Long version,
            @Nullable String reason,
            Map<String, Object> detail) {}

    /** A metric event, counted once the decision is written. */
    sealed interface Signal {

        /** The lease made a move of the table. */
        record Transition(LeaseMove move) implements Signal {}

        /** A report under an epoch that is no longer current: {@code kind} lease, bank, incarnation or agent. */
        record Stale(String kind) implements Signal {}

        record Delivered(
                String domainId,
                TransportClass transportClass,
                long bytesPerRank,
                double predictedMs,
                double realisedMs)
                implements Signal {}

        record Committed(int blocks) implements Signal {}
    }
}
