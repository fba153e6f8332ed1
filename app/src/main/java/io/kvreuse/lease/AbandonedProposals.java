package io.kvreuse.lease;

import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.context.event.EventListener;
import org.springframework.stereotype.Component;
import org.springframework.transaction.reactive.TransactionalOperator;
import reactor.core.publisher.Mono;

/**
 * Withdraws a lease whose router was answered NO_HINT before the lease was written: nobody will
 * fetch it, so the donor's pins are let go now rather than at the transfer deadline. A lease that
 * got further (a destination arrived, a transfer was ordered) is left to its normal course.
 */
@Component
class AbandonedProposals {

    static final String ACTOR = "system:selection";
    private static final Log log = LogFactory.getLog(AbandonedProposals.class);

    private final LeaseAggregates aggregates;
    private final LeaseWriter writer;
    private final TransactionalOperator tx;
    private final Clock clock;

    AbandonedProposals(LeaseAggregates aggregates, LeaseWriter writer, TransactionalOperator tx, Clock clock) {
        this.aggregates = aggregates;
        this.writer = writer;
        this.tx = tx;
        this.clock = clock;
    }

    @EventListener
    void on(ProposalAbandoned abandoned) {
        withdraw(abandoned.leaseId(), abandoned.reason())
                .subscribe(
                        null,
                        e -> log.warn("abandoned lease " + abandoned.leaseId()
                                + " not withdrawn; its deadlines will end it: " + e));
    }

    /** Ends the lease if it is still PROPOSED or only pinned; the state it was left in, if it moved. */
    Mono<LeaseState> withdraw(UUID leaseId, String reason) {
        Instant now = clock.instant();
        List<LeaseDecision> written = new ArrayList<>(1);
        return aggregates
                .lock(List.of(leaseId))
                .flatMap(found -> Mono.justOrEmpty(found.get(leaseId)))
                .map(lease -> LeaseDecider.decide(lease, new LeaseReport.Withdrawn(reason), ACTOR, now))
                .filter(d -> !d.changes().isEmpty())
                .flatMap(d -> {
                    written.add(d);
                    return writer.write(written, now).thenReturn(d.state());
                })
                .as(tx::transactional)
                .doOnNext(state -> writer.published(written));
    }
}
