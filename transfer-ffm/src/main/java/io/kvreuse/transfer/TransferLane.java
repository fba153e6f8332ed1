package io.kvreuse.transfer;

/**
 * The kind of path UCX moved a transfer's bytes on. NIXL does not report it: the emulator does,
 * and for a real NIXL it is what UCX's lane rules give for the memory, the peer and the error mode
 * ({@link #predict}). Only {@link #EMULATED} is slow for GPU memory (0.3–0.7 GB/s against 1–2 TB/s).
 */
public enum TransferLane {
    /** Host memory on both sides: shared memory or TCP within the host. */
    HOST,
    /** GPU memory within one process, by the CUDA copy engines ({@code cuda_copy}). */
    CUDA_COPY,
    /** GPU memory between two processes of one host ({@code cuda_ipc}). */
    CUDA_IPC,
    /** GPU memory staged through host buffers by UCX's software emulation: the slow lane. */
    EMULATED;

    /**
     * UCX's choice as measured with NIXL 1.4 / UCX 1.22: error mode {@code peer} excludes {@code
     * cuda_copy} and {@code cuda_ipc} refuses the same process, so GPU copies in one process are
     * emulated unless the mode is {@code none} and the copy is a loopback of one agent.
     */
    static TransferLane predict(boolean gpuMemory, boolean loopback, boolean peerInProcess, String errorMode) {
        if (!gpuMemory) {
            return HOST;
        }
        if (loopback) {
            return "none".equals(errorMode) ? CUDA_COPY : EMULATED;
        }
        return peerInProcess ? EMULATED : CUDA_IPC;
    }

    static TransferLane ofCode(int code) {
        TransferLane[] lanes = values();
        if (code < 0 || code >= lanes.length) {
            throw new IllegalArgumentException("unknown lane code " + code);
        }
        return lanes[code];
    }
}
