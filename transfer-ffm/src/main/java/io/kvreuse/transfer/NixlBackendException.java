package io.kvreuse.transfer;

/** The backend (UCX or the emulator) failed, or an older NIXL build collapsed a failure it could not classify. */
public final class NixlBackendException extends NixlException {

    NixlBackendException(String operation, String handle, int code, String meaning) {
        super(operation, handle, code, meaning);
    }
}
