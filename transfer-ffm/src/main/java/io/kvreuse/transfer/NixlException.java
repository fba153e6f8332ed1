package io.kvreuse.transfer;

/**
 * NIXL refused an operation with a C-ABI status code. Subclasses name the kind of refusal; the code
 * is kept because older NIXL builds report most kinds as {@code -2}.
 */
public class NixlException extends TransferException {

    private final int code;

    NixlException(String operation, String handle, int code, String meaning) {
        super(operation, handle, meaning + " (nixl_capi status " + code + ")");
        this.code = code;
    }

    /** The raw {@code nixl_capi_status_t} value. */
    public int code() {
        return code;
    }
}
