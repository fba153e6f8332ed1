package io.kvreuse.transfer;

/** Base of every failure the transfer engine reports, naming the operation and the handle involved. */
public class TransferException extends RuntimeException {

    private final String operation;
    private final String handle;

    TransferException(String operation, String handle, String message) {
        super(operation + " on " + handle + ": " + message);
        this.operation = operation;
        this.handle = handle;
    }

    /** The NIXL call or engine operation that failed, e.g. {@code post_xfer_req}. */
    public String operation() {
        return operation;
    }

    /** Which agent, peer, region or transfer the operation was applied to. */
    public String handle() {
        return handle;
    }
}
