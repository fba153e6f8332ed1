package io.kvreuse.transfer;

/** NIXL rejected an argument: a descriptor not covered by a registration, mismatched lengths, a handle on the wrong side, or an own-name peer. */
public final class NixlInvalidParameterException extends NixlException {

    NixlInvalidParameterException(String operation, String handle, int code, String meaning) {
        super(operation, handle, code, meaning);
    }
}
