package io.kvreuse.agent;

import io.kvreuse.protocol.PartState;
import io.kvreuse.protocol.UnfinishedOrder;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import reactor.core.publisher.Mono;

/**
 * Orders claimed for this host whose claim answer never reached this process: a control-plane
 * replica that died after committing the claim, or a connection lost on the way. The control plane
 * hands such an order out again after its visibility timeout, but once the transfer deadline passed
 * the lease is UNCERTAIN and the order is no longer handed out, so without evidence its pins and
 * allocation would wait for an operator. This process knows every order it received; an order that
 * the control plane lists as claimed and unfinished here, that this process never received, and that
 * is still listed after longer than a poll answer can take to arrive ({@code pollTimeout}), was never
 * started by anyone: each of its parts is reported QUIESCED with that evidence, and the order is
 * never run here should it be handed out later.
 */
final class LostOrders {

    private static final Log log = LogFactory.getLog(LostOrders.class);

    private final ControlPlaneClient client;
    private final PartReports reports;
    private final OrderRunner runner;
    private final String hostId;
    private final Duration pollTimeout;
    private final Clock clock;
    // unknown orders, with when this process first saw them listed
    private final Map<UUID, Instant> suspects = new ConcurrentHashMap<>();

    LostOrders(
            ControlPlaneClient client,
            PartReports reports,
            OrderRunner runner,
            String hostId,
            Duration pollTimeout,
            Clock clock) {
        this.client = client;
        this.reports = reports;
        this.runner = runner;
        this.hostId = hostId;
        this.pollTimeout = pollTimeout;
        this.clock = clock;
    }

    /** One look at the host's unfinished orders; settles those lost long enough. Never fails. */
    Mono<Void> check() {
        return Mono.defer(() -> client.unfinishedOrders(hostId))
                .doOnNext(this::judge)
                .onErrorResume(e -> {
                    log.debug("could not check for lost orders of host " + hostId + ": " + e.getMessage());
                    return Mono.empty();
                })
                .then();
    }

    void judge(List<UnfinishedOrder> orders) {
        Instant now = clock.instant();
        Set<UUID> listed = new HashSet<>();
        for (UnfinishedOrder order : orders) {
            listed.add(order.orderId());
            if (runner.known(order.orderId())) {
                suspects.remove(order.orderId());
                continue;
            }
            Instant first = suspects.putIfAbsent(order.orderId(), now);
            if (first != null
                    && Duration.between(first, now).compareTo(pollTimeout) > 0
                    && runner.adopt(order.orderId())) {
                suspects.remove(order.orderId());
                settle(order, first);
            }
        }
        suspects.keySet().retainAll(listed);
    }

    private void settle(UnfinishedOrder order, Instant first) {
        String evidence = "order claimed for host " + hostId + " at " + order.claimedAt() + " (claim " + order.claims()
                + ") never reached agent pid " + ProcessHandle.current().pid()
                + ", which has run every order it received; still unreceived since " + first
                + ", past the poll timeout, so nothing was started for it";
        for (UnfinishedOrder.Part part : order.parts()) {
            reports.report(order.orderId(), part.rank(), PartState.QUIESCED, 0, 0, null, evidence);
        }
        log.warn("order " + order.orderId() + " of lease " + order.leaseId() + " was claimed for host " + hostId
                + " but its answer never arrived: " + order.parts().size() + " part(s) reported QUIESCED");
    }
}
