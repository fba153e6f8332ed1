package io.kvreuse.bank;

/** A retained bank's visibility to donor selection. */
public enum BankState {
    /** Not every rank part is ready yet. */
    PENDING,
    /** Every part ready, inventories agree, owner READY: visible to donor selection. */
    PUBLISHED,
    /** Hidden: an event gap awaits a snapshot, ranks disagree, or the owner is not READY. */
    UNPUBLISHED,
    /** Gone with its owner; kept for history. */
    DROPPED
}
