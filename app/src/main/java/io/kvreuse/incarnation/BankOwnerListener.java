package io.kvreuse.incarnation;

import io.kvreuse.bank.RetainedBanks;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.context.event.EventListener;
import org.springframework.stereotype.Component;

/**
 * Banks follow their owner: unpublished the moment it leaves READY, published again when it is
 * READY, dropped after a clean exit. A lost owner's bank stays (unpublished) for operator cleanup.
 * It lives with the incarnations, which already create their banks, so banks never look back at them.
 */
@Component
class BankOwnerListener {

    private static final Log log = LogFactory.getLog(BankOwnerListener.class);

    private final RetainedBanks banks;

    BankOwnerListener(RetainedBanks banks) {
        this.banks = banks;
    }

    @EventListener
    void onStateChanged(IncarnationStateChanged change) {
        if (change.from() == null) {
            return;
        }
        var work = change.to() == IncarnationState.EXITED
                ? banks.dropAfterExit(change.incarnationId())
                : banks.ownerChanged(change.incarnationId(), "system");
        work.subscribe(
                null,
                e -> log.warn("banks of incarnation " + change.incarnationId() + " not updated after " + change.to()
                        + "; the publication check will catch up: " + e.getMessage()));
    }
}
