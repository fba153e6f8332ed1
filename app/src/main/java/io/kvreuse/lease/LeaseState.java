package io.kvreuse.lease;

/**
 * The life of one D→P attempt (DESIGN §3): {@code PROPOSED → SOURCE_PINNED → TRANSFERRING →
 * DELIVERED → COMMITTED → RELEASING → RELEASED}, with {@code REFUSED}, {@code EXPIRED}, {@code
 * FAILED} and {@code UNCERTAIN}. Memory is released only through {@code RELEASING}; {@code
 * UNCERTAIN} leaves only on quiescence evidence or operator cleanup, never on a timer. The moves
 * between them are the rows of {@link LeaseMove}.
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

    /** Nothing can happen to the lease any more. */
    public boolean isTerminal() {
        return this == RELEASED || this == EXPIRED;
    }

    /** A transfer may be running or may have touched the destination: no release without proof. */
    public boolean mayBeWriting() {
        return this == TRANSFERRING || this == UNCERTAIN;
    }
}
