package io.kvreuse.transfer;

/** Where a submitted transfer is in its life. */
public enum TransferState {
    IN_PROGRESS,
    COMPLETED,
    FAILED,
    CANCELLED
}
