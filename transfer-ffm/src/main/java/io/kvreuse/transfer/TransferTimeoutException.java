package io.kvreuse.transfer;

/** A transfer did not complete before the caller's deadline; it keeps running until cancelled or closed. */
public final class TransferTimeoutException extends TransferException {

    TransferTimeoutException(String operation, String handle, String message) {
        super(operation, handle, message);
    }
}
