package io.kvreuse.agent;

import io.kvreuse.protocol.TransferOrder;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * Hands each part of an order to a worker; ranks run in parallel, each on its own GPU's NIXL agent.
 * An order handed out again (the control plane did not hear from us in time) is not run twice: the
 * outbox is still delivering its reports.
 */
final class OrderRunner {

    private static final Log log = LogFactory.getLog(OrderRunner.class);
    private static final int REMEMBERED = 10_000;

    private final PartExecutor executor;
    private final ExecutorService workers;
    private final Set<UUID> running = ConcurrentHashMap.newKeySet();
    private final Set<UUID> finished = Collections.newSetFromMap(Collections.synchronizedMap(new LinkedHashMap<>() {
        @Override
        protected boolean removeEldestEntry(Map.Entry<UUID, Boolean> eldest) {
            return size() > REMEMBERED;
        }
    }));

    OrderRunner(PartExecutor executor, ExecutorService workers) {
        this.executor = executor;
        this.workers = workers;
    }

    synchronized void run(TransferOrder order) {
        if (finished.contains(order.orderId()) || !running.add(order.orderId())) {
            log.info("order " + order.orderId() + " handed out again (claim " + order.claims() + "): already run");
            return;
        }
        log.info("order " + order.orderId() + " of lease " + order.leaseId() + ": "
                + order.parts().size() + " parts, "
                + order.parts().stream().mapToLong(TransferOrder.Part::bytes).sum() + " bytes");
        var remaining =
                new java.util.concurrent.atomic.AtomicInteger(order.parts().size());
        for (TransferOrder.Part part : order.parts()) {
            try {
                workers.execute(() -> {
                    try {
                        executor.execute(order.orderId(), part);
                    } finally {
                        if (remaining.decrementAndGet() == 0) {
                            finished.add(order.orderId());
                            running.remove(order.orderId());
                        }
                    }
                });
            } catch (RejectedExecutionException shuttingDown) {
                log.warn("order " + order.orderId() + " rank " + part.rank() + " not started: the agent is stopping");
            }
        }
    }

    /** An order this process must never run: it was settled as its previous owner left it. */
    void settled(UUID orderId) {
        finished.add(orderId);
    }

    /** Whether this process received the order (it runs or ran it, or settled it). */
    boolean known(UUID orderId) {
        return running.contains(orderId) || finished.contains(orderId);
    }

    /**
     * Takes an order this process never received as settled, so that it is never run here; false if
     * it was received meanwhile (then it runs, and its own reports speak for it).
     */
    synchronized boolean adopt(UUID orderId) {
        if (known(orderId)) {
            return false;
        }
        finished.add(orderId);
        return true;
    }

    int running() {
        return running.size();
    }
}
