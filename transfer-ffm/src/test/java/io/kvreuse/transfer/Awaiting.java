package io.kvreuse.transfer;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/** Bounded waits on a condition, polled briefly: the tests' alternative to sleeping. */
final class Awaiting {

    private static final long POLL_NANOS = 200_000;

    private Awaiting() {}

    static void until(BooleanSupplier condition, Duration timeout, String what) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out after " + timeout + " waiting for " + what);
            }
            LockSupport.parkNanos(POLL_NANOS);
        }
    }

    /** Collects notifications until {@code count} arrived or the timeout passes. */
    static List<Notification> notifications(NixlAgent agent, int count, Duration timeout) {
        List<Notification> received = new ArrayList<>();
        long deadline = System.nanoTime() + timeout.toNanos();
        while (received.size() < count && System.nanoTime() < deadline) {
            received.addAll(agent.takeNotifications());
            if (received.size() < count) {
                LockSupport.parkNanos(POLL_NANOS);
            }
        }
        return received;
    }
}
