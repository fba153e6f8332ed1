package io.kvreuse.lease;

import io.kvreuse.lease.LeaseAggregate.HoldState;
import java.time.Clock;
import java.time.Instant;
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

    private final LeaseStore leases;
    private final LeaseAggregates aggregates;
    private final LeaseWriter writer;
    private final Clock clock;

    LeaseReclaim(LeaseStore leases, LeaseAggregates aggregates, LeaseWriter writer, Clock clock) {
        this.leases = leases;
        this.aggregates = aggregates;
        this.writer = writer;
        this.clock = clock;
    }

    /** What reclaiming released. */
    public record Released(int leases, long pins, long destinations) {}

    public Mono<Released> reclaim(UUID incarnationId, String actor, String reason) {
        Instant now = clock.instant();
        LeaseReport cleanup = new LeaseReport.Cleanup(incarnationId, reason);
        return leases.unfinished(incarnationId)
                .collectList()
                .flatMap(aggregates::lock)
                .map(locked -> locked.values().stream()
                        .map(l -> LeaseDecider.decide(l, cleanup, actor, now))
                        .toList())
                .flatMap(decided -> writer.write(decided, now).then(Mono.fromSupplier(() -> {
                    writer.published(decided);
                    return released(decided);
                })));
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
