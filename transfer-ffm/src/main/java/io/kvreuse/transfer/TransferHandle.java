package io.kvreuse.transfer;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;

/**
 * One posted transfer. The agent thread polls it to completion (which is also when NIXL sends its
 * notification); callers wait with a deadline, react to {@link #completion()}, or cancel. Closing
 * releases the NIXL request; it is idempotent.
 */
public final class TransferHandle implements AutoCloseable {

    private final Transfers owner;
    private final String description;
    private final NativeHandle request;
    private final @Nullable PeerConnection peer;
    private final long totalBytes;
    private final long descriptors;
    private final TransferLane predictedLane;
    private final CompletableFuture<TransferTelemetry> completion = new CompletableFuture<>();
    private volatile TransferState state = TransferState.IN_PROGRESS;
    // agent thread only
    private long postedAtNanos;
    private volatile long spinUntilNanos;
    private long postNanos;
    private boolean nixlReleased;
    private boolean closeWhenDone;
    private @Nullable Object reuseKey;
    private boolean returned;

    TransferHandle(
            Transfers owner,
            String description,
            NativeHandle request,
            @Nullable PeerConnection peer,
            long totalBytes,
            long descriptors,
            TransferLane predictedLane) {
        this.owner = owner;
        this.description = description;
        this.request = request;
        this.peer = peer;
        this.totalBytes = totalBytes;
        this.descriptors = descriptors;
        this.predictedLane = predictedLane;
    }

    public TransferState state() {
        return state;
    }

    public boolean isDone() {
        return state != TransferState.IN_PROGRESS;
    }

    /**
     * Completes with the telemetry, or exceptionally with a {@link TransferException}. Non-async
     * dependent stages run on the agent thread: keep them short or use the {@code *Async} variants.
     */
    public CompletableFuture<TransferTelemetry> completion() {
        return completion.copy();
    }

    /**
     * Waits until the transfer completes or {@code timeout} passes. Never call it on the agent's own
     * thread. The transfer keeps running after a timeout: cancel or close it.
     *
     * @throws TransferTimeoutException when the deadline passes first
     * @throws TransferException when the transfer failed or was cancelled
     */
    public TransferTelemetry await(Duration timeout) {
        owner.requireCallerThread("await");
        long start = System.nanoTime();
        long spinUntil = Math.min(spinUntilNanos, start + timeout.toNanos());
        // a parked thread wakes tens to hundreds of µs late: for as long as the copy may take, watch instead
        while (!completion.isDone() && System.nanoTime() - spinUntil < 0) {
            Thread.onSpinWait();
        }
        try {
            long left = timeout.toNanos() - (System.nanoTime() - start);
            return completion.get(Math.max(0, left), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            throw new TransferTimeoutException("await", description, "not complete within " + timeout);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new TransferTimeoutException("await", description, "interrupted while waiting");
        } catch (ExecutionException e) {
            throw e.getCause() instanceof RuntimeException failure ? failure : new IllegalStateException(e);
        }
    }

    /** Telemetry of a completed transfer. */
    public TransferTelemetry telemetry() {
        if (state != TransferState.COMPLETED) {
            throw new IllegalStateException(description + " is " + state + ", not COMPLETED");
        }
        return completion.join();
    }

    /** Cancels an in-flight transfer; false if it already finished or NIXL could not cancel it. */
    public boolean cancel() {
        return owner.cancel(this);
    }

    /** Releases the NIXL request (or hands it back for an identical next submit); idempotent. */
    @Override
    public void close() {
        if (!request.isClosed() && !returned) {
            owner.close(this);
        }
    }

    @Override
    public String toString() {
        return description + " (" + state + ")";
    }

    String description() {
        return description;
    }

    NativeHandle request() {
        return request;
    }

    @Nullable
    PeerConnection peer() {
        return peer;
    }

    long totalBytes() {
        return totalBytes;
    }

    /** Descriptors after merging the runs contiguous on both sides. */
    long descriptors() {
        return descriptors;
    }

    TransferLane predictedLane() {
        return predictedLane;
    }

    /**
     * Until when pollers should watch back to back: the spin window, plus for GPU lanes the time the
     * copy engines need for the bytes at 1 TB/s (a 1 GiB copy takes about a millisecond).
     */
    void posted(long postedAt, long postDuration, Duration spinWindow, TransferLane lane) {
        boolean copyEngines = lane == TransferLane.CUDA_COPY || lane == TransferLane.CUDA_IPC;
        spinUntilNanos = postedAt + spinWindow.toNanos() + (copyEngines ? totalBytes / 1000 : 0);
        postedAtNanos = postedAt;
        postNanos = postDuration;
    }

    long spinUntilNanos() {
        return spinUntilNanos;
    }

    long postedAtNanos() {
        return postedAtNanos;
    }

    long postNanos() {
        return postNanos;
    }

    boolean nixlReleased() {
        return nixlReleased;
    }

    void markNixlReleased() {
        nixlReleased = true;
    }

    boolean closeWhenDone() {
        return closeWhenDone;
    }

    void reuseAs(Object key) {
        reuseKey = key;
    }

    @Nullable
    Object reuseKey() {
        return reuseKey;
    }

    /** The native request went back to the agent for reuse: this handle no longer owns it. */
    void markReturned() {
        returned = true;
    }

    boolean returned() {
        return returned;
    }

    void requestCloseWhenDone() {
        closeWhenDone = true;
    }

    void succeed(TransferTelemetry telemetry) {
        state = TransferState.COMPLETED;
        completion.complete(telemetry);
    }

    void fail(TransferException failure, TransferState finalState) {
        state = finalState;
        completion.completeExceptionally(failure);
    }
}
