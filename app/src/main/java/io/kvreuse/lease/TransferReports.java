package io.kvreuse.lease;

import io.kvreuse.error.ItemResult;
import java.util.List;
import java.util.UUID;
import java.util.stream.IntStream;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;

/**
 * The node agent's side of leases, handed over by {@code orders} (the agent's HTTP edge): order
 * claims and part reports, any number at once, decided by the lease decider on the locked leases
 * with their orders and parts, and written by the set-based writer — the order and part rows are
 * the lease's. Concurrent part reports are decided together in one transaction ({@link
 * GroupCommit}).
 */
@Component
class TransferReports {

    /** One request's part reports, each on the lease of the same index. */
    private record Entry(List<UUID> leaseIds, List<LeaseReport.Part> reports, String actor) {}

    private final ReportGroups decider;
    private final GroupCommit<Entry, List<ItemResult<LeaseDecision>>> groups;

    TransferReports(ReportGroups decider) {
        this.decider = decider;
        this.groups = new GroupCommit<>(4, 128, entries -> {
            List<ReportGroups.Grouped> all = entries.stream()
                    .flatMap(e -> grouped(e.leaseIds(), e.reports(), e.actor()).stream())
                    .toList();
            return decider.commit(
                            all.stream().map(ReportGroups.Grouped::leaseId).toList(), l -> Mono.just(all))
                    .map(results -> {
                        int[] from = {0};
                        return entries.stream()
                                .map(e -> results.subList(
                                        from[0], from[0] += e.leaseIds().size()))
                                .toList();
                    });
        });
    }

    /** In a transaction of its own: per report, the lease's state after it, or its problem. */
    Mono<List<ItemResult<LeaseState>>> parts(List<UUID> leaseIds, List<LeaseReport.Part> reports, String actor) {
        return groups.submit(new Entry(leaseIds, reports, actor)).map(TransferReports::states);
    }

    /**
     * Call inside the claim's transaction: the claimed orders' leases, where a SOURCE_PINNED one
     * moves to TRANSFERRING, as its transfer may start writing.
     */
    Mono<List<ItemResult<LeaseState>>> claimed(List<UUID> leaseIds, String actor) {
        List<LeaseReport> claims = leaseIds.stream()
                .<LeaseReport>map(id -> new LeaseReport.OrderClaimed())
                .toList();
        List<ReportGroups.Grouped> all = grouped(leaseIds, claims, actor);
        return decider.decide(leaseIds, l -> Mono.just(all)).map(TransferReports::states);
    }

    private static List<ReportGroups.Grouped> grouped(
            List<UUID> leaseIds, List<? extends LeaseReport> reports, String actor) {
        return IntStream.range(0, leaseIds.size())
                .mapToObj(i -> new ReportGroups.Grouped(
                        leaseIds.get(i),
                        actor,
                        lease -> Mono.just(reports.get(i)),
                        () -> LeaseProblems.noSuchLease(leaseIds.get(i))))
                .toList();
    }

    private static List<ItemResult<LeaseState>> states(List<ItemResult<LeaseDecision>> results) {
        return results.stream()
                .map(r -> ReportGroups.answer(r, LeaseDecision::state))
                .toList();
    }
}
