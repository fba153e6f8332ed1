package io.kvreuse.lease;

import io.kvreuse.lease.LeaseAggregate.HoldState;
import java.util.List;
import java.util.UUID;
import org.springframework.stereotype.Service;
import reactor.core.publisher.Mono;

/**
 * Operator cleanup's part in leases (call inside the cleanup transaction, after the incarnation was
 * fenced and the operator attested quiescence where it was not proven): every unfinished lease of
 * the incarnation ends, decided by the lease decider and written in one go. What the fenced side
 * held is released in the database at once (its process is gone); what a live other side holds is
 * released through the normal UNPIN/RELEASE commands.
 */
@Service
public class LeaseReclaim {

    private final LeaseAggregates aggregates;
    private final ReportGroups groups;
    private final LeaseWriter writer;

    LeaseReclaim(LeaseAggregates aggregates, ReportGroups groups, LeaseWriter writer) {
        this.aggregates = aggregates;
        this.groups = groups;
        this.writer = writer;
    }

    public record Released(int leases, long pins, long destinations) {}

    public Mono<Released> reclaim(UUID incarnationId, String actor, String reason) {
        return aggregates
                .read(LeaseAggregates.UNFINISHED, s -> s.bind("i", incarnationId))
                .map(l -> l.row().leaseId())
                .collectList()
                .flatMap(ids -> groups.decideAll(ids, new LeaseReport.Cleanup(incarnationId, reason), actor))
                .map(decided -> {
                    writer.published(decided);
                    return released(decided);
                });
    }

    /** The fenced side's pins and destination ranks that cleanup released at once. */
    private static Released released(List<LeaseDecision> decided) {
        long pins = 0;
        long destinations = 0;
        for (LeaseDecision d : decided) {
            pins += d.changes().stream()
                    .filter(c -> c instanceof LeaseChange.PinMoved p
                            && p.from() == HoldState.RELEASING
                            && p.to() == HoldState.RELEASED)
                    .count();
            if (d.changes().contains(new LeaseChange.DestinationsMoved(HoldState.RELEASING, HoldState.RELEASED))) {
                destinations += d.after().destinations().stream()
                        .filter(x -> x.state() == HoldState.RELEASED)
                        .count();
            }
        }
        return new Released(decided.size(), pins, destinations);
    }
}
