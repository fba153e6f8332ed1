package io.kvreuse.incarnation;

import java.util.UUID;
import org.jspecify.annotations.Nullable;

/**
 * An incarnation changed state; published as a Spring application event after the change
 * committed, on the thread that committed it (listeners must not block). {@code from} is null for a
 * new registration. Banks are unpublished when an incarnation leaves {@code READY}.
 */
public record IncarnationStateChanged(
        UUID incarnationId, @Nullable IncarnationState from, IncarnationState to, long fencingEpoch) {

    public boolean leftReady() {
        return from == IncarnationState.READY && to != IncarnationState.READY;
    }
}
