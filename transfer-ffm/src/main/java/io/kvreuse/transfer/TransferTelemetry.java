package io.kvreuse.transfer;

import java.time.Duration;

/**
 * What one completed transfer moved and how long it took.
 *
 * @param totalBytes bytes moved
 * @param descriptorCount descriptors in the request (before NIXL merges contiguous ones)
 * @param postDuration time spent inside the post call
 * @param transferDuration time from post until completion was observed
 * @param reportedByNixl true when NIXL's own telemetry supplied the durations; false when the
 *     agent runs without telemetry capture and the engine measured them itself
 */
public record TransferTelemetry(
        long totalBytes,
        long descriptorCount,
        Duration postDuration,
        Duration transferDuration,
        boolean reportedByNixl) {

    /** Bytes per second over the transfer duration, or 0 when the duration is too short to measure. */
    public double bytesPerSecond() {
        long nanos = transferDuration.toNanos();
        return nanos == 0 ? 0 : totalBytes * 1e9 / nanos;
    }
}
