package io.kvreuse.transfer;

/** NIXL caught a C++ exception inside the call. */
public final class NixlNativeException extends NixlException {

    NixlNativeException(String operation, String handle, int code, String meaning) {
        super(operation, handle, code, meaning);
    }
}
