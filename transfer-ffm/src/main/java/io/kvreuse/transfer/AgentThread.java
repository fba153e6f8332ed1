package io.kvreuse.transfer;

import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.Delayed;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * The one platform thread that makes every native call for one NIXL agent. NIXL's default sync
 * mode does no locking, and downcalls would pin a virtual thread's carrier, so callers (Netty or
 * virtual threads) hand work here and wait for the result.
 */
final class AgentThread implements AutoCloseable {

    private final String agentName;
    private final ScheduledThreadPoolExecutor executor;
    private final long spinNanos;
    private volatile Thread thread;

    /**
     * @param idleSpin how long the thread watches its queue after a task before parking
     * @param callerSpin how long a caller watches for its answer before parking
     */
    AgentThread(String agentName, Duration idleSpin, Duration callerSpin) {
        this.agentName = agentName;
        this.spinNanos = callerSpin.toNanos();
        ThreadFactory factory = runnable -> {
            Thread t = Thread.ofPlatform()
                    .name("nixl-agent-" + agentName)
                    .daemon(true)
                    .unstarted(runnable);
            thread = t;
            return t;
        };
        this.executor = new WatchfulExecutor(factory, idleSpin.toNanos());
        executor.setRemoveOnCancelPolicy(true);
    }

    /**
     * After each task, watches the queue for up to {@code idleNanos} until a task is due: a parked
     * thread wakes 100–200 µs late on a virtual machine, longer than a small transfer takes.
     */
    private static final class WatchfulExecutor extends ScheduledThreadPoolExecutor {
        private final long idleNanos;

        WatchfulExecutor(ThreadFactory factory, long idleNanos) {
            super(1, factory);
            this.idleNanos = idleNanos;
        }

        @Override
        protected void afterExecute(Runnable task, @Nullable Throwable failure) {
            long until = System.nanoTime() + idleNanos;
            while (!isShutdown() && !due() && System.nanoTime() - until < 0) {
                Thread.onSpinWait();
            }
        }

        private boolean due() {
            Runnable head = getQueue().peek();
            return head != null && (!(head instanceof Delayed d) || d.getDelay(TimeUnit.NANOSECONDS) <= 0);
        }
    }

    boolean isCurrent() {
        return Thread.currentThread() == thread;
    }

    /** Runs {@code task} on the agent thread and returns its result, rethrowing its exception. */
    <T> T call(String operation, Callable<T> task) {
        if (isCurrent()) {
            return callHere(task);
        }
        Future<T> future;
        try {
            future = executor.submit(task);
        } catch (RejectedExecutionException e) {
            throw new HandleClosedException(operation, "agent " + agentName, "the agent is closed");
        }
        return join(future);
    }

    void run(String operation, Runnable task) {
        call(operation, () -> {
            task.run();
            return null;
        });
    }

    /** Queues background work to run as soon as the thread is free; silently dropped once closed. */
    void execute(Runnable task) {
        try {
            executor.execute(task);
        } catch (RejectedExecutionException e) {
            // closing: the agent's close() releases whatever the task would have handled
        }
    }

    /** Schedules background work such as progress polling; silently dropped once closed. */
    void schedule(Runnable task, Duration delay) {
        try {
            executor.schedule(task, delay.toNanos(), TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            // closing: the agent's close() releases whatever the task would have handled
        }
    }

    @Override
    public void close() {
        executor.shutdownNow();
        if (isCurrent()) {
            return; // closing from a task on this thread: it ends when the task returns
        }
        try {
            executor.awaitTermination(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static <T> T callHere(Callable<T> task) {
        try {
            return task.call();
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private <T> T join(Future<T> future) {
        long until = System.nanoTime() + spinNanos;
        while (!future.isDone() && System.nanoTime() - until < 0) {
            Thread.onSpinWait(); // the answer usually comes within microseconds: parking would add 100+
        }
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return future.get();
                } catch (InterruptedException e) {
                    // the native call cannot be abandoned halfway: wait for it, then restore the flag
                    interrupted = true;
                } catch (ExecutionException e) {
                    throw unwrap(e.getCause());
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static RuntimeException unwrap(Throwable cause) {
        if (cause instanceof RuntimeException runtime) {
            return runtime;
        }
        if (cause instanceof Error error) {
            throw error;
        }
        return new IllegalStateException(cause);
    }
}
