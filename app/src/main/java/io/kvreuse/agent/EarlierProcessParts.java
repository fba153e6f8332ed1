package io.kvreuse.agent;

import io.kvreuse.protocol.PartState;
import io.kvreuse.protocol.UnfinishedOrder;
import java.time.Duration;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import reactor.core.publisher.Mono;
import reactor.util.retry.Retry;

/**
 * Parts that an earlier agent process of this host claimed and never finished (it was killed or
 * crashed mid-transfer). This process holds the host lock, so that process is gone, and with it
 * every NIXL request it had posted: nothing it started can still touch the engines' memory. Once,
 * before this process polls its first order, each such part is reported QUIESCED with that
 * evidence, and its order is never run here, so the lease can fail and release instead of waiting
 * for an operator.
 */
final class EarlierProcessParts {

    private static final Log log = LogFactory.getLog(EarlierProcessParts.class);

    private final ControlPlaneClient client;
    private final PartReports reports;
    private final OrderRunner runner;
    private final HostLock lock;
    private final String hostId;
    private final Mono<Void> settled;

    EarlierProcessParts(
            ControlPlaneClient client,
            PartReports reports,
            OrderRunner runner,
            HostLock lock,
            String hostId,
            Duration backoff,
            Duration maxBackoff) {
        this.client = client;
        this.reports = reports;
        this.runner = runner;
        this.lock = lock;
        this.hostId = hostId;
        this.settled = Mono.defer(() -> client.unfinishedOrders(hostId))
                .retryWhen(Retry.backoff(Long.MAX_VALUE, backoff)
                        .maxBackoff(maxBackoff)
                        .filter(e -> !(e instanceof ControlPlaneException c) || c.isTransient()))
                .doOnNext(orders -> orders.forEach(this::settle))
                .onErrorResume(e -> {
                    log.warn("could not learn the unfinished orders of earlier agent processes of host " + hostId
                            + "; their leases need quiescence evidence or an operator: " + e.getMessage());
                    return Mono.empty();
                })
                .then()
                .cache();
    }

    /** Completes once the earlier processes' parts are settled (the reports queued); runs once per process. */
    Mono<Void> settled() {
        return settled;
    }

    private void settle(UnfinishedOrder order) {
        runner.settled(order.orderId());
        String evidence = lock.evidence() + "; order claimed at " + order.claimedAt() + " (claim " + order.claims()
                + ") was never finished by it";
        for (UnfinishedOrder.Part part : order.parts()) {
            reports.report(order.orderId(), part.rank(), PartState.QUIESCED, 0, 0, null, evidence);
        }
        log.warn("order " + order.orderId() + " of lease " + order.leaseId() + " on host " + hostId
                + " was left unfinished by an earlier agent process: "
                + order.parts().size()
                + " part(s) reported QUIESCED");
    }
}
