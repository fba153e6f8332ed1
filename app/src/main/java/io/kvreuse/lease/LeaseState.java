package io.kvreuse.lease;

import java.util.EnumSet;
import java.util.Set;

/**
 * The life of one D→P attempt (DESIGN §3): {@code PROPOSED → SOURCE_PINNED → TRANSFERRING →
 * DELIVERED → COMMITTED → RELEASING → RELEASED}, with {@code REFUSED}, {@code EXPIRED}, {@code
 * FAILED} and {@code UNCERTAIN}. Memory is released only through {@code RELEASING}; {@code
 * UNCERTAIN} leaves only on quiescence evidence or operator cleanup, never on a timer.
 */
public enum LeaseState {
    PROPOSED,
    SOURCE_PINNED,
    TRANSFERRING,
    DELIVERED,
    COMMITTED,
    RELEASING,
    RELEASED,
    REFUSED,
    EXPIRED,
    FAILED,
    UNCERTAIN;

    /** The states this one may move to. */
    public Set<LeaseState> next() {
        return switch (this) {
            // PROPOSED → RELEASING: the TTL passed with some ranks already pinned
            case PROPOSED -> EnumSet.of(SOURCE_PINNED, REFUSED, EXPIRED, FAILED, RELEASING);
            case SOURCE_PINNED -> EnumSet.of(TRANSFERRING, FAILED, RELEASING);
            case TRANSFERRING -> EnumSet.of(DELIVERED, FAILED, UNCERTAIN);
            case DELIVERED -> EnumSet.of(COMMITTED, FAILED);
            case COMMITTED, REFUSED, FAILED -> EnumSet.of(RELEASING);
            case UNCERTAIN -> EnumSet.of(FAILED);
            case RELEASING -> EnumSet.of(RELEASED);
            case RELEASED, EXPIRED -> EnumSet.noneOf(LeaseState.class);
        };
    }

    public boolean canMoveTo(LeaseState target) {
        return next().contains(target);
    }

    /** Nothing can happen to the lease any more. */
    public boolean isTerminal() {
        return this == RELEASED || this == EXPIRED;
    }

    /** A transfer may be running or may have touched the destination: no release without proof. */
    public boolean mayBeWriting() {
        return this == TRANSFERRING || this == UNCERTAIN;
    }
}
