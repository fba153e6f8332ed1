package io.kvreuse.config;

/**
 * Elapsed real time in nanoseconds, on a monotonic clock: how long something really took, which the
 * injected {@link java.time.Clock} (wall time, moved by hand in tests) cannot say. Tests replace it.
 */
@FunctionalInterface
public interface Ticker {

    /** Nanoseconds since an arbitrary origin; only differences mean anything. */
    long nanos();
}
