package io.kvreuse.agent;

import java.util.concurrent.Callable;

/**
 * Runs CUDA work on the thread of a GPU's NIXL agent, where that GPU is the current device: a CUDA
 * IPC handle must be opened (and closed) with its own device current, and switching devices on
 * another GPU's agent thread would leave that agent's next registration on the wrong one.
 */
interface GpuThreads {

    /** Runs work on the caller's thread: for hosts without NIXL agents (tests). */
    GpuThreads CALLER = new GpuThreads() {
        @Override
        public <T> T call(int gpuOrdinal, String what, Callable<T> task) {
            try {
                return task.call();
            } catch (RuntimeException e) {
                throw e;
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }
    };

    <T> T call(int gpuOrdinal, String what, Callable<T> task);
}
