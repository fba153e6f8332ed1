package io.kvreuse.transfer.cuda;

/** A CUDA runtime call returned an error code. */
public final class CudaException extends RuntimeException {

    private final String operation;
    private final int code;

    CudaException(String operation, int code, String message) {
        super(operation + " failed with cudaError " + code + ": " + message);
        this.operation = operation;
        this.code = code;
    }

    public String operation() {
        return operation;
    }

    public int code() {
        return code;
    }
}
