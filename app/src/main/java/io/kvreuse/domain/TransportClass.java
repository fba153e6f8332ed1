package io.kvreuse.domain;

/** How KV blocks move between the engines of a layout domain (DESIGN §3). */
public enum TransportClass {
    /** GPU to GPU on one host through CUDA IPC. */
    GPU_CUDA_IPC,
    /** GPU to GPU across hosts of one multi-node NVLink fabric. */
    GPU_MNNVL,
    /** The existing host-memory path ({@code kv.fetch@1.0}); TP must be 1. */
    CPU_TP1;

    public boolean isGpu() {
        return this != CPU_TP1;
    }
}
