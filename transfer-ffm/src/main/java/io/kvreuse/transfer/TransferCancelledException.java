package io.kvreuse.transfer;

/** A transfer was cancelled before it completed. */
public final class TransferCancelledException extends TransferException {

    TransferCancelledException(String operation, String handle, String message) {
        super(operation, handle, message);
    }
}
