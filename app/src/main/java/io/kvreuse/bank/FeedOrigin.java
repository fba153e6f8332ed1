package io.kvreuse.bank;

import java.util.UUID;
import org.springframework.stereotype.Component;

/**
 * This control plane process as the origin of its inventory NOTIFYs: the one-call ingestion names
 * it in its notification, and the replica's own feed follower leaves such a notification alone,
 * since the commit that sent it hands the follower its row directly ({@link BankChanged}).
 */
@Component
class FeedOrigin {

    private final String id = UUID.randomUUID().toString();

    String id() {
        return id;
    }
}
