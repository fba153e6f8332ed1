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
 * the lease's. Part reports are decided together with concurrent requests' reports ({@link
 * ReportGroups}).
 */
@Component
class TransferReports {

    private final ReportGroups groups;
    private final LeaseWriter writer;

    TransferReports(ReportGroups groups, LeaseWriter writer) {
        this.groups = groups;
        this.writer = writer;
    }

    /** In a transaction of its own (a group's): per report, the lease's state after it, or its problem. */
    Mono<List<ItemResult<LeaseState>>> parts(List<UUID> leaseIds, List<LeaseReport.Part> reports, String actor) {
        return groups.submit(grouped(leaseIds, reports, actor)).map(TransferReports::states);
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
        return groups.decide(leaseIds, l -> Mono.just(all))
                .doOnNext(r -> writer.published(ReportGroups.decisions(r)))
                .map(TransferReports::states);
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
