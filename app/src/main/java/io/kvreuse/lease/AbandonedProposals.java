package io.kvreuse.lease;

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

    private final LeaseStore leases;
    private final LeaseLedger ledger;
    private final TransactionalOperator tx;

    AbandonedProposals(LeaseStore leases, LeaseLedger ledger, TransactionalOperator tx) {
        this.leases = leases;
        this.ledger = ledger;
        this.tx = tx;
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
        return leases.lock(leaseId)
                .flatMap(row -> switch (row.state()) {
                    case PROPOSED ->
                        ledger.holdsAnything(row)
                                .flatMap(held -> held
                                        ? ledger.release(row, ACTOR, "WITHDRAWN", reason)
                                        : ledger.expire(row, ACTOR, reason));
                    case SOURCE_PINNED -> ledger.release(row, ACTOR, "WITHDRAWN", reason);
                    default -> Mono.<LeaseRow>empty();
                })
                .map(LeaseRow::state)
                .as(tx::transactional);
    }
}
