package io.kvreuse.transfer;

/** Direction of a transfer, seen from the initiating agent. */
public enum TransferOp {
    /** Copy remote blocks into local blocks. */
    READ(0),
    /** Copy local blocks into remote blocks. */
    WRITE(1);

    private final int code;

    TransferOp(int code) {
        this.code = code;
    }

    int code() {
        return code;
    }
}
