package io.kvreuse.lease;

/**
 * How a lease ended (DESIGN §3, the move table's outcomes); set by the move that ends it and kept
 * through {@code RELEASING} and {@code RELEASED}. A lease still under way has none, except one the
 * target aborted while the transfer may still be writing: {@code UNCERTAIN} with {@code ABORTED}
 * (an operator's cleanup may still end it as {@code RECLAIMED}).
 */
public enum LeaseOutcome {
    /** The target committed the delivered blocks. */
    COMMITTED,
    /** The target aborted the lease. */
    ABORTED,
    /** The donor refused a PIN, or its epoch, the bank's epoch or a block changed before the pins held. */
    REFUSED,
    /** Every part stopped and some ranks are DONE, but not all for the same block range. */
    PARTIAL,
    /** Every part stopped and none is DONE, or a lease failed without a more precise outcome. */
    FAILED,
    /** Every rank is DONE but the donor's or the target's epoch changed during the transfer. */
    FENCED,
    /**
     * Its TTL passed, or selection gave it up, while nothing was held; or the donor pinned but no
     * transfer began before the transfer deadline.
     */
    EXPIRED,
    /** Delivered, but the target never committed before the abandon deadline. */
    ABANDONED,
    /** Selection gave up on the proposal after the donor had pinned. */
    WITHDRAWN,
    /** An operator's cleanup of one of its parties ended it. */
    RECLAIMED
}
