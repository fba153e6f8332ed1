package io.kvreuse.lease;

import io.kvreuse.error.ItemResult;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Function;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;

/**
 * The node agent's side of leases, handed over by {@code orders} (the agent's HTTP edge) in one
 * call: order claims and part reports, any number at once, decided by the lease decider on the
 * locked leases with their orders and parts, and written by the set-based writer — the order and
 * part rows are the lease's. Call inside the caller's transaction.
 */
@Component
class TransferReports {

    private final LeaseAggregates aggregates;
    private final LeaseWriter writer;
    private final Clock clock;

    TransferReports(LeaseAggregates aggregates, LeaseWriter writer, Clock clock) {
        this.aggregates = aggregates;
        this.writer = writer;
        this.clock = clock;
    }

    /** Per report (on the lease of the same index), the lease's state after it, or its problem. */
    Mono<List<ItemResult<LeaseState>>> parts(List<UUID> leaseIds, List<LeaseReport.Part> reports, String actor) {
        return decide(leaseIds, reports::get, actor);
    }

    /** The claimed orders' leases: a SOURCE_PINNED one moves to TRANSFERRING, as its transfer may start writing. */
    Mono<List<ItemResult<LeaseState>>> claimed(List<UUID> leaseIds, String actor) {
        return decide(leaseIds, i -> new LeaseReport.OrderClaimed(), actor);
    }

    private Mono<List<ItemResult<LeaseState>>> decide(
            List<UUID> leaseIds, Function<Integer, LeaseReport> reports, String actor) {
        Instant now = clock.instant();
        return aggregates.lock(new LinkedHashSet<>(leaseIds)).flatMap(leases -> {
            Map<UUID, LeaseAggregate> current = new HashMap<>(leases);
            List<LeaseDecision> decisions = new ArrayList<>();
            List<ItemResult<LeaseState>> results = new ArrayList<>();
            for (int i = 0; i < leaseIds.size(); i++) {
                LeaseAggregate lease = current.get(leaseIds.get(i));
                if (lease == null) {
                    results.add(ItemResult.failed(LeaseProblems.noSuchLease(leaseIds.get(i))));
                    continue;
                }
                LeaseDecision d = LeaseDecider.decide(lease, reports.apply(i), actor, now);
                current.put(leaseIds.get(i), d.after());
                decisions.add(d);
                results.add(
                        d.problem() == null ? ItemResult.ok(d.state()) : ItemResult.<LeaseState>failed(d.problem()));
            }
            return writer.write(decisions, now)
                    .then(Mono.fromRunnable(() -> writer.published(decisions)))
                    .thenReturn(results);
        });
    }
}
