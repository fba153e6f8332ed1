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

    /**
     * Counts against its donor's and target's in-flight caps (a PROPOSED lease until the sweeper
     * expires it, even past its TTL): the states the {@code lease_inflight} counters track.
     */
    public boolean inFlight() {
        return switch (this) {
            case PROPOSED, SOURCE_PINNED, TRANSFERRING, DELIVERED, UNCERTAIN, RELEASING -> true;
            case COMMITTED, RELEASED, REFUSED, EXPIRED, FAILED -> false;
        };
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
