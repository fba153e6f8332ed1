package io.kvreuse.transfer;

/** A closed agent, region, peer, block set or transfer was used. */
public final class HandleClosedException extends TransferException {

    HandleClosedException(String operation, String handle, String message) {
        super(operation, handle, message);
    }
}
