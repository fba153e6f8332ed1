package io.kvreuse.transfer;

/** NIXL does not know the named peer (never loaded, invalidated, or disconnected) or the descriptors in its metadata. */
public final class NixlNotFoundException extends NixlException {

    NixlNotFoundException(String operation, String handle, int code, String meaning) {
        super(operation, handle, code, meaning);
    }
}
