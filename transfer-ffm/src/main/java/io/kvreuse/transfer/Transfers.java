package io.kvreuse.transfer;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.MemoryLayout.PathElement;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;

/**
 * Creates, posts, polls, cancels and releases one agent's transfer requests. Everything here runs on
 * the agent thread; in-flight requests are polled by a self-rescheduling progress task, because in
 * UCX a transfer's notification is sent only when the initiator polls it to completion. A transfer
 * younger than the spin window is polled back to back (other tasks of the agent still run between
 * polls); older ones every progress interval, with no back-off: a late poll is lost bandwidth.
 */
final class Transfers {

    private final AgentContext ctx;
    private final List<TransferHandle> active = new ArrayList<>();
    private final Set<TransferHandle> open = new LinkedHashSet<>();
    private boolean progressScheduled;
    private long sequence;
    // reused index arrays for make_xfer_req, which copies them
    private MemorySegment localIndices = MemorySegment.NULL;
    private MemorySegment remoteIndices = MemorySegment.NULL;
    private final MemorySegment telemetryOut = Arena.ofAuto().allocate(NixlCapi.TELEMETRY);
    /**
     * Completed requests kept for an identical next submit: NIXL lets a finished request be posted
     * again, which skips make_xfer_req (validation and merging). Least recently used goes first.
     */
    private final LinkedHashMap<ReuseKey, NativeHandle> idle = new LinkedHashMap<>(16, 0.75f, true);

    private static final int IDLE_LIMIT = 16;

    /**
     * What makes two requests the same NIXL request (the notification is set per post): the same
     * block sets and op, and the same immutable run list by identity, so a lookup costs nothing per
     * run. Callers that repeat a transfer keep their run list.
     */
    static final class ReuseKey {
        final BlockSet local;
        final BlockSet remote;
        final TransferOp op;
        final List<SlotRun> runs;

        ReuseKey(BlockSet local, BlockSet remote, TransferOp op, List<SlotRun> runs) {
            this.local = local;
            this.remote = remote;
            this.op = op;
            this.runs = runs;
        }

        @Override
        public boolean equals(Object other) {
            return other instanceof ReuseKey key
                    && key.local == local
                    && key.remote == remote
                    && key.op == op
                    && key.runs == runs;
        }

        @Override
        public int hashCode() {
            return (31 * System.identityHashCode(local) + System.identityHashCode(remote)) * 31
                    + System.identityHashCode(runs)
                    + op.ordinal();
        }
    }

    Transfers(AgentContext ctx) {
        this.ctx = ctx;
    }

    /** Transfer between prepared block sets: only index arrays cross into NIXL per request. */
    TransferHandle submit(TransferRequest request) {
        TransferRequests.Shape shape = TransferRequests.validate(ctx, request);
        PeerConnection peer = request.remote().peer();
        String description = describe(request.op(), peer);
        ReuseKey key = new ReuseKey(request.local(), request.remote(), request.op(), request.runs());
        NativeHandle handle = idle.remove(key);
        if (handle == null) {
            handle = NativeHandle.create(
                    description, (arena, out) -> make(request, shape.pieces(), out, description), this::destroy);
        }
        TransferHandle transfer = new TransferHandle(
                this,
                description,
                handle,
                peer,
                request.totalBytes(),
                TransferRequests.mergedRuns(request.runs()),
                lane(
                        request.local().geometry().kind(),
                        request.remote().geometry().kind(),
                        peer));
        return post(transfer, request.notification());
    }

    /** One-shot transfer without prepared lists ({@code create_xfer_req}), one descriptor per run. */
    TransferHandle submitOnce(
            TransferOp op, BlockGeometry local, PeerConnection peer, BlockGeometry remote, List<SlotRun> runs) {
        String description = describe(op, peer);
        NativeHandle handle = NativeHandle.create(
                description,
                (arena, out) -> {
                    try (Arena temp = Arena.ofConfined()) {
                        MemorySegment localList = Descriptors.runList(ctx.capi, temp, local, runs, true);
                        MemorySegment remoteList = Descriptors.runList(ctx.capi, temp, remote, runs, false);
                        try {
                            int code = ctx.capi.createXferReq(
                                    ctx.agent("create_xfer_req"),
                                    op.code(),
                                    localList,
                                    remoteList,
                                    peer.isLoopback() ? ctx.cName() : peer.cName(),
                                    out,
                                    MemorySegment.NULL);
                            checkPeer(code, "create_xfer_req", description, peer, remoteList);
                        } finally {
                            ctx.capi.destroyXferDlist(localList);
                            ctx.capi.destroyXferDlist(remoteList);
                        }
                    }
                },
                this::destroy);
        int blocks = runs.stream().mapToInt(SlotRun::blockCount).sum();
        TransferHandle transfer = new TransferHandle(
                this,
                description,
                handle,
                peer,
                blocks * local.bytesPerBlock(),
                TransferRequests.mergedRuns(runs),
                lane(local.kind(), remote.kind(), peer));
        return post(transfer, null);
    }

    private void make(TransferRequest request, int pieces, MemorySegment out, String description) {
        ensureIndexCapacity(pieces);
        TransferRequests.fillIndices(
                request.runs(), request.local().geometry(), request.remote().geometry(), localIndices, remoteIndices);
        int code = ctx.capi.makeXferReq(
                ctx.agent("make_xfer_req"),
                request.op().code(),
                request.local().handle().pointer("make_xfer_req"),
                localIndices,
                pieces,
                request.remote().handle().pointer("make_xfer_req"),
                remoteIndices,
                pieces,
                out,
                MemorySegment.NULL);
        checkPeer(code, "make_xfer_req", description, request.remote().peer(), null);
    }

    private void ensureIndexCapacity(int pieces) {
        long bytes = (long) pieces * Integer.BYTES;
        if (localIndices.byteSize() < bytes) {
            long capacity = Math.max(bytes, 2 * localIndices.byteSize());
            localIndices = Arena.ofAuto().allocate(capacity, Integer.BYTES);
            remoteIndices = Arena.ofAuto().allocate(capacity, Integer.BYTES);
        }
    }

    private TransferLane lane(MemoryKind local, MemoryKind remote, @Nullable PeerConnection peer) {
        boolean gpu = local == MemoryKind.VRAM || remote == MemoryKind.VRAM;
        boolean loopback = peer != null && peer.isLoopback();
        boolean inProcess = peer != null && NixlAgent.inProcess(peer.remoteAgent());
        return TransferLane.predict(gpu, loopback, inProcess, ctx.options.ucxErrorMode());
    }

    private TransferHandle post(TransferHandle transfer, byte @Nullable [] notification) {
        long start = System.nanoTime();
        int code;
        try (Arena temp = Arena.ofConfined()) {
            MemorySegment options = notification == null ? MemorySegment.NULL : notifyOptions(temp, notification);
            try {
                code = ctx.capi.postXferReq(
                        ctx.agent("post_xfer_req"), transfer.request().pointer("post_xfer_req"), options);
            } finally {
                if (notification != null) {
                    ctx.capi.destroyOptArgs(options);
                }
            }
        }
        transfer.posted(start, System.nanoTime() - start, ctx.options.spinWindow(), transfer.predictedLane());
        if (code < 0) {
            release(transfer);
            checkPeer(code, "post_xfer_req", transfer.description(), transfer.peer(), null);
        }
        open.add(transfer);
        if (code == NixlStatus.SUCCESS) {
            complete(transfer);
        } else {
            active.add(transfer);
            scheduleProgress(true);
        }
        return transfer;
    }

    private MemorySegment notifyOptions(Arena temp, byte[] notification) {
        MemorySegment out = temp.allocate(ADDRESS);
        NixlStatus.check(ctx.capi.createOptArgs(out), "create_opt_args", ctx.describe());
        MemorySegment options = out.get(ADDRESS, 0);
        int code =
                ctx.capi.optArgsSetNotifMsg(options, temp.allocateFrom(JAVA_BYTE, notification), notification.length);
        if (code == NixlStatus.SUCCESS) {
            code = ctx.capi.optArgsSetHasNotif(options, true);
        }
        if (code != NixlStatus.SUCCESS) {
            ctx.capi.destroyOptArgs(options);
            NixlStatus.check(code, "opt_args_set_notif_msg", ctx.describe());
        }
        return options;
    }

    private void scheduleProgress(boolean now) {
        if (!progressScheduled) {
            progressScheduled = true;
            if (now) {
                ctx.thread.execute(this::progress);
            } else {
                ctx.thread.schedule(this::progress, ctx.options.progressInterval());
            }
        }
    }

    private void progress() {
        progressScheduled = false;
        if (ctx.isClosed()) {
            return;
        }
        long now = System.nanoTime();
        boolean spin = false;
        Iterator<TransferHandle> it = active.iterator();
        while (it.hasNext()) {
            TransferHandle transfer = it.next();
            if (poll(transfer)) {
                it.remove();
            } else if (transfer.spinUntilNanos() - now > 0) {
                spin = true;
            }
        }
        if (!active.isEmpty()) {
            scheduleProgress(spin);
        }
    }

    /** Returns true once the transfer reached a final state. */
    private boolean poll(TransferHandle transfer) {
        int code = ctx.capi.getXferStatus(
                ctx.agent("get_xfer_status"), transfer.request().pointer("get_xfer_status"));
        if (code == NixlStatus.IN_PROG) {
            return false;
        }
        if (code == NixlStatus.SUCCESS) {
            complete(transfer);
            return true;
        }
        NixlException failure = NixlStatus.exception(code, "get_xfer_status", transfer.description());
        transfer.fail(PeerDiagnosis.refine(ctx, transfer.peer(), failure, null), TransferState.FAILED);
        return true;
    }

    private void complete(TransferHandle transfer) {
        transfer.succeed(telemetry(transfer));
        if (transfer.closeWhenDone()) {
            closeNow(transfer);
        }
    }

    private TransferTelemetry telemetry(TransferHandle transfer) {
        TransferLane lane = reportedLane(transfer);
        if (ctx.options.captureTelemetry()) {
            MemorySegment out = telemetryOut;
            int code = ctx.capi.getXferTelemetry(
                    ctx.agent("get_xfer_telemetry"), transfer.request().pointer("get_xfer_telemetry"), out);
            if (code == NixlStatus.SUCCESS) {
                return new TransferTelemetry(
                        field(out, "total_bytes"),
                        field(out, "desc_count"),
                        Duration.ofNanos(field(out, "post_duration_us") * 1000),
                        Duration.ofNanos(field(out, "xfer_duration_us") * 1000),
                        true,
                        lane);
            }
        }
        return new TransferTelemetry(
                transfer.totalBytes(),
                transfer.descriptors(),
                Duration.ofNanos(transfer.postNanos()),
                Duration.ofNanos(System.nanoTime() - transfer.postedAtNanos()),
                false,
                lane);
    }

    /** The library's own account of the lane (the emulator gives one), else UCX's rule for it. */
    private TransferLane reportedLane(TransferHandle transfer) {
        int code = ctx.capi.reportedLane(transfer.request().pointer("kvreuse_emu_xfer_lane"));
        return code < 0 ? transfer.predictedLane() : TransferLane.ofCode(code);
    }

    private static long field(MemorySegment telemetry, String name) {
        return telemetry.get(JAVA_LONG, NixlCapi.TELEMETRY.byteOffset(PathElement.groupElement(name)));
    }

    boolean cancel(TransferHandle transfer) {
        return ctx.thread.call("cancel", () -> cancelHere(transfer));
    }

    private boolean cancelHere(TransferHandle transfer) {
        if (transfer.isDone() || transfer.request().isClosed()) {
            return false;
        }
        int code = ctx.capi.releaseXferReq(
                ctx.agent("release_xfer_req"), transfer.request().pointer("release_xfer_req"));
        if (code != NixlStatus.SUCCESS) {
            return false; // NIXL could not cancel: the transfer runs on and the progress task finishes it
        }
        transfer.markNixlReleased();
        active.remove(transfer);
        closeNow(transfer);
        transfer.fail(
                new TransferCancelledException("cancel", transfer.description(), "cancelled before completion"),
                TransferState.CANCELLED);
        return true;
    }

    void close(TransferHandle transfer) {
        ctx.thread.run("close", () -> closeHere(transfer));
    }

    private void closeHere(TransferHandle transfer) {
        if (transfer.request().isClosed() || transfer.returned()) {
            return;
        }
        if (transfer.isDone() || cancelHere(transfer)) {
            closeNow(transfer);
        } else {
            transfer.requestCloseWhenDone();
        }
    }

    private void closeNow(TransferHandle transfer) {
        open.remove(transfer);
        Object key = transfer.reuseKey();
        if (key instanceof ReuseKey reuse && transfer.state() == TransferState.COMPLETED && !transfer.nixlReleased()) {
            transfer.markReturned();
            NativeHandle previous = idle.put(reuse, transfer.request());
            if (previous != null) {
                releaseIdle(previous);
            }
            if (idle.size() > IDLE_LIMIT) {
                var eldest = idle.entrySet().iterator();
                releaseIdle(eldest.next().getValue());
                eldest.remove();
            }
            return;
        }
        release(transfer);
    }

    /** Releases the kept requests that use {@code set}: before NIXL may let go of its descriptors. */
    void evict(BlockSet set) {
        evictIf(key -> key.local == set || key.remote == set);
    }

    /** Releases the kept requests to or from {@code peer}. */
    void evict(PeerConnection peer) {
        evictIf(key -> key.remote.peer() == peer);
    }

    private void evictIf(Predicate<ReuseKey> uses) {
        idle.entrySet().removeIf(entry -> {
            boolean used = uses.test(entry.getKey());
            if (used) {
                releaseIdle(entry.getValue());
            }
            return used;
        });
    }

    private void releaseIdle(NativeHandle request) {
        if (!request.isClosed()) {
            int code = ctx.capi.releaseXferReq(ctx.agent("release_xfer_req"), request.pointer("release_xfer_req"));
            NixlStatus.check(code, "release_xfer_req", request.description());
            request.close();
        }
    }

    /** NIXL's order: release the request, then destroy its wrapper (destroy first is an error). */
    private void release(TransferHandle transfer) {
        NativeHandle request = transfer.request();
        if (request.isClosed()) {
            return;
        }
        if (!transfer.nixlReleased()) {
            int code = ctx.capi.releaseXferReq(ctx.agent("release_xfer_req"), request.pointer("release_xfer_req"));
            NixlStatus.check(code, "release_xfer_req", transfer.description());
            transfer.markNixlReleased();
        }
        request.close();
    }

    private void destroy(MemorySegment request) {
        NixlStatus.check(ctx.capi.destroyXferReq(request), "destroy_xfer_req", ctx.describe());
    }

    /** Agent close: cancel or finish every open transfer within {@code grace}, then release them. */
    void closeAll(Duration grace) {
        long deadline = System.nanoTime() + grace.toNanos();
        for (TransferHandle transfer : List.copyOf(open)) {
            closeHere(transfer);
        }
        while (!active.isEmpty() && System.nanoTime() < deadline) {
            active.removeIf(this::poll);
            LockSupport.parkNanos(ctx.options.progressInterval().toNanos());
        }
        for (TransferHandle transfer : List.copyOf(open)) {
            if (!transfer.isDone()) {
                transfer.fail(
                        new TransferCancelledException("close", transfer.description(), "agent closed"),
                        TransferState.CANCELLED);
            }
            open.remove(transfer);
        }
        active.clear();
        idle.values().forEach(this::releaseIdle);
        idle.clear();
    }

    void requireCallerThread(String operation) {
        if (ctx.thread.isCurrent()) {
            throw new IllegalStateException(operation + " would block " + ctx.describe() + "'s own thread");
        }
    }

    private String describe(TransferOp op, @Nullable PeerConnection peer) {
        sequence++;
        return "transfer #" + sequence + " " + op + " " + ctx.name + (op == TransferOp.READ ? " <- " : " -> ")
                + (peer == null ? "?" : peer.remoteAgent());
    }

    private void checkPeer(
            int code, String operation, String handle, @Nullable PeerConnection peer, @Nullable MemorySegment dlist) {
        if (code < 0) {
            throw PeerDiagnosis.refine(ctx, peer, NixlStatus.exception(code, operation, handle), dlist);
        }
    }
}
