package io.kvreuse.agent;

import io.kvreuse.protocol.PartState;
import io.kvreuse.protocol.TransferOrder;
import io.kvreuse.transfer.BlockSet;
import io.kvreuse.transfer.NixlAgent;
import io.kvreuse.transfer.NixlException;
import io.kvreuse.transfer.TransferException;
import io.kvreuse.transfer.TransferHandle;
import io.kvreuse.transfer.TransferLane;
import io.kvreuse.transfer.TransferRequest;
import io.kvreuse.transfer.TransferTelemetry;
import io.kvreuse.transfer.TransferTimeoutException;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * Executes one part on a worker thread (never a Netty thread): a loopback READ by the NIXL agent of
 * the destination GPU, which registered both engines' regions. A part that misses its deadline is
 * reported UNCERTAIN at once — it may still be writing — and QUIESCED only after NIXL released the
 * request; a failure is reported FAILED only once the request is released too.
 */
final class PartExecutor {

    private static final Log log = LogFactory.getLog(PartExecutor.class);
    private static final long QUIESCE_POLL_MS = 50;

    private final GpuAgents gpus;
    private final RegionImports regions;
    private final PartReports reports;
    private final AgentMetrics metrics;
    private final String hostId;
    private final Duration timeout;
    private volatile boolean warnedEmulated;

    PartExecutor(
            GpuAgents gpus,
            RegionImports regions,
            PartReports reports,
            AgentMetrics metrics,
            String hostId,
            Duration timeout) {
        this.gpus = gpus;
        this.regions = regions;
        this.reports = reports;
        this.metrics = metrics;
        this.hostId = hostId;
        this.timeout = timeout;
    }

    void execute(UUID orderId, TransferOrder.Part part) {
        long started = System.nanoTime();
        TransferOrder.Endpoint src = part.source();
        TransferOrder.Endpoint dst = part.destination();
        NixlAgent agent;
        RegionImports.@Nullable Use from = null;
        RegionImports.@Nullable Use to = null;
        TransferHandle handle;
        try {
            OrderChecks.check(part);
            agent = initiator(part);
            from = regions.acquire(src.regionRef(), agent, src.gpuOrdinal());
            to = regions.acquire(dst.regionRef(), agent, dst.gpuOrdinal());
            SlotPlan plan = SlotPlan.of(part, from.size(), to.size());
            BlockSet local = agent.localBlocks(to.registered(), plan.bytesPerBlock());
            BlockSet remote = agent.loopback().blocks(from.registered().asRemote(), plan.bytesPerBlock());
            reports.report(orderId, part.rank(), PartState.RUNNING, 0, 0, null, null);
            handle = agent.submit(TransferRequest.read(local, remote, plan.runs()));
        } catch (RuntimeException e) {
            // nothing was posted: no memory was or will be touched
            release(from, to);
            fail(orderId, part, started, e);
            return;
        }
        try {
            await(orderId, part, handle, started);
        } finally {
            // only now, with the request released, may a retired region be deregistered and unmapped
            release(from, to);
        }
    }

    private void await(UUID orderId, TransferOrder.Part part, TransferHandle handle, long started) {
        try {
            TransferTelemetry t = handle.await(timeout);
            handle.close();
            long micros = TimeUnit.NANOSECONDS.toMicros(t.transferDuration().toNanos());
            metrics.done(t.totalBytes(), t.transferDuration(), t.lane());
            if (t.lane() == TransferLane.EMULATED && !warnedEmulated) {
                warnedEmulated = true;
                log.warn("GPU memory moved on UCX's emulated lane (staged through host memory, ~0.5 GB/s): run NIXL's"
                        + " UCX backend with ucx_error_handling_mode=none and one NIXL agent per GPU per process");
            }
            reports.report(orderId, part.rank(), PartState.DONE, t.totalBytes(), micros, null, null);
        } catch (TransferTimeoutException e) {
            reports.report(
                    orderId,
                    part.rank(),
                    PartState.UNCERTAIN,
                    0,
                    elapsedUs(started),
                    null,
                    "not complete within " + timeout + ": cancelling");
            metrics.uncertain();
            String how = quiesce(handle);
            reports.report(orderId, part.rank(), PartState.QUIESCED, 0, elapsedUs(started), null, how);
        } catch (RuntimeException e) {
            handle.close();
            fail(orderId, part, started, e);
        }
    }

    private NixlAgent initiator(TransferOrder.Part part) {
        TransferOrder.Endpoint src = part.source();
        TransferOrder.Endpoint dst = part.destination();
        if (!src.hostId().equals(hostId) || !dst.hostId().equals(hostId)) {
            throw new PartRefusedException("part moves " + src.hostId() + " -> " + dst.hostId()
                    + ": this agent runs same-host (CUDA IPC) transfers on " + hostId + " only");
        }
        gpus.agent(src.gpuOrdinal());
        return gpus.agent(dst.gpuOrdinal());
    }

    private static void release(RegionImports.@Nullable Use from, RegionImports.@Nullable Use to) {
        if (from != null) {
            from.close();
        }
        if (to != null) {
            to.close();
        }
    }

    /** Cancels until NIXL lets go of the request; returns how it ended. */
    private String quiesce(TransferHandle handle) {
        long waits = 0;
        while (true) {
            if (handle.cancel()) {
                return "cancelled; the native request was released";
            }
            if (handle.isDone()) {
                handle.close();
                return "finished after the deadline (" + handle.state() + "); the native request was released";
            }
            if (waits++ % 200 == 0) {
                log.warn("transfer " + handle + " could not be cancelled yet; still waiting for NIXL to release it");
            }
            sleep();
        }
    }

    private void fail(UUID orderId, TransferOrder.Part part, long started, RuntimeException e) {
        @Nullable Integer nativeStatus = e instanceof NixlException n ? n.code() : null;
        String kind = e instanceof TransferException || e instanceof PartRefusedException
                ? ""
                : e.getClass().getSimpleName() + ": ";
        log.warn("order " + orderId + " rank " + part.rank() + " failed: " + kind + e.getMessage());
        metrics.failed();
        reports.report(
                orderId, part.rank(), PartState.FAILED, 0, elapsedUs(started), nativeStatus, kind + e.getMessage());
    }

    private static long elapsedUs(long startedNanos) {
        return TimeUnit.NANOSECONDS.toMicros(System.nanoTime() - startedNanos);
    }

    private static void sleep() {
        try {
            Thread.sleep(QUIESCE_POLL_MS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for a transfer to quiesce", e);
        }
    }
}
