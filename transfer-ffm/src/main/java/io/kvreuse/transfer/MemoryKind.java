package io.kvreuse.transfer;

/** NIXL memory types the engine registers; the ordinal-independent code is the C-ABI value. */
public enum MemoryKind {
    /** Host memory, including emulated "GPU" banks in shared memory. */
    DRAM(0),
    /** Device memory; {@code devId} is the CUDA device index. */
    VRAM(1);

    private final int code;

    MemoryKind(int code) {
        this.code = code;
    }

    int code() {
        return code;
    }
}
