package io.kvreuse.transfer;

import java.time.Duration;

/**
 * What one completed transfer moved and how long it took.
 *
 * @param totalBytes bytes moved
 * @param descriptorCount descriptors after NIXL merged the ones contiguous on both sides: one per
 *     maximal slot run (NIXL's own {@code desc_count} when it captures telemetry, the same count
 *     computed from the runs when it does not)
 * @param postDuration time spent inside the post call
 * @param transferDuration time from post until completion was observed
 * @param reportedByNixl true when NIXL's own telemetry supplied the durations; false when the
 *     agent runs without telemetry capture and the engine measured them itself
 * @param lane the path the bytes took (see {@link TransferLane} for where it comes from)
 */
public record TransferTelemetry(
        long totalBytes,
        long descriptorCount,
        Duration postDuration,
        Duration transferDuration,
        boolean reportedByNixl,
        TransferLane lane) {

    /** Bytes per second over the transfer duration, or 0 when the duration is too short to measure. */
    public double bytesPerSecond() {
        long nanos = transferDuration.toNanos();
        return nanos == 0 ? 0 : totalBytes * 1e9 / nanos;
    }
}
