package io.kvreuse.transfer;

/** A NIXL handle was used in the wrong state, e.g. a request destroyed before it was released. */
public final class NixlInvalidStateException extends NixlException {

    NixlInvalidStateException(String operation, String handle, int code, String meaning) {
        super(operation, handle, code, meaning);
    }
}
