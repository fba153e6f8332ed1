package io.kvreuse.incarnation;

import java.util.EnumSet;
import java.util.Set;

/**
 * The life of an engine incarnation (DESIGN §3). Clean: {@code REGISTERED → READY → DRAINING →
 * EXITED}. Unclean: {@code SUSPECT} after missed heartbeats (never proof of death; heartbeats bring
 * it back to {@code READY}), {@code LOST} when liveness is gone (it never comes back), then {@code
 * RECLAIM_PENDING} and {@code RECLAIMED} through operator cleanup. Every transition bumps the
 * fencing epoch.
 */
public enum IncarnationState {
    REGISTERED,
    READY,
    DRAINING,
    EXITED,
    SUSPECT,
    LOST,
    RECLAIM_PENDING,
    RECLAIMED;

    /** The states this one may move to. */
    public Set<IncarnationState> next() {
        return switch (this) {
            // a registration that never heartbeats goes SUSPECT too, or it would hold its GPUs forever
            case REGISTERED -> EnumSet.of(READY, SUSPECT, EXITED);
            case READY -> EnumSet.of(DRAINING, SUSPECT, EXITED, RECLAIM_PENDING);
            case DRAINING -> EnumSet.of(SUSPECT, EXITED, RECLAIM_PENDING);
            case SUSPECT -> EnumSet.of(READY, LOST, EXITED, RECLAIM_PENDING);
            case LOST -> EnumSet.of(RECLAIM_PENDING, RECLAIMED);
            case RECLAIM_PENDING -> EnumSet.of(RECLAIMED);
            case EXITED, RECLAIMED -> EnumSet.noneOf(IncarnationState.class);
        };
    }

    public boolean canMoveTo(IncarnationState target) {
        return next().contains(target);
    }

    /**
     * Whether the incarnation still holds its stable name and GPU ordinals: everything but a clean
     * exit or a completed reclaim.
     */
    public boolean holdsResources() {
        return this != EXITED && this != RECLAIMED;
    }

    /** Whether liveness was lost: the engine must re-register as a new incarnation. */
    public boolean isLost() {
        return this == LOST || this == RECLAIM_PENDING || this == RECLAIMED;
    }
}
