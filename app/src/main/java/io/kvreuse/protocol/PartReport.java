package io.kvreuse.protocol;

import org.jspecify.annotations.Nullable;

/** {@code POST /api/v1/orders/{orderId}/parts/{rank}}; {@code fencingEpoch} is the agent's registration epoch. */
public record PartReport(
        PartState state,
        long bytes,
        long durationUs,
        @Nullable Integer nativeStatus,
        @Nullable String detail,
        long fencingEpoch) {

    public PartReport withEpoch(long epoch) {
        return new PartReport(state, bytes, durationUs, nativeStatus, detail, epoch);
    }
}
