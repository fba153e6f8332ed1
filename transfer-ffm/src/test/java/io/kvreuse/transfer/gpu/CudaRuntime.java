package io.kvreuse.transfer.gpu;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.Path;

/**
 * The CUDA runtime calls the GPU tier needs besides {@link io.kvreuse.transfer.cuda.CudaIpc} (which
 * also makes the device current on the agent's thread, as in the node agent): the raw {@code
 * cudaMemcpy} baseline. Test-only; loads the same
 * {@code libcudart} as {@code CudaIpc} and the emulator, so one runtime serves the whole process.
 *
 * <p>Timing is done by the caller with {@link System#nanoTime()} around synchronous calls: a
 * device-to-device {@code cudaMemcpy} may return before the copy finished, so {@link #memcpy}
 * callers finish with {@link #synchronize()}, which makes the baseline wall-clock time on the
 * caller thread, the same clock the transfer path is measured on.
 */
final class CudaRuntime {

    private static final int MEMCPY_DEFAULT = 4; // cudaMemcpyDefault: direction from unified addressing

    private final MethodHandle memcpy;
    private final MethodHandle deviceSynchronize;
    private final MethodHandle errorString;

    private CudaRuntime(SymbolLookup lookup) {
        Linker linker = Linker.nativeLinker();
        memcpy = linker.downcallHandle(
                find(lookup, "cudaMemcpy"),
                FunctionDescriptor.of(
                        ValueLayout.JAVA_INT,
                        ValueLayout.ADDRESS,
                        ValueLayout.ADDRESS,
                        ValueLayout.JAVA_LONG,
                        ValueLayout.JAVA_INT));
        deviceSynchronize = linker.downcallHandle(
                find(lookup, "cudaDeviceSynchronize"), FunctionDescriptor.of(ValueLayout.JAVA_INT));
        errorString = linker.downcallHandle(
                find(lookup, "cudaGetErrorString"), FunctionDescriptor.of(ValueLayout.ADDRESS, ValueLayout.JAVA_INT));
    }

    static CudaRuntime open(Path library) {
        return new CudaRuntime(SymbolLookup.libraryLookup(library, Arena.global()));
    }

    /** Queues one copy between device (or any unified) addresses; see {@link #synchronize()}. */
    void memcpy(long dst, long src, long bytes) {
        try {
            check("cudaMemcpy", (int) memcpy.invokeExact(
                    MemorySegment.ofAddress(dst), MemorySegment.ofAddress(src), bytes, MEMCPY_DEFAULT));
        } catch (RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    void synchronize() {
        try {
            check("cudaDeviceSynchronize", (int) deviceSynchronize.invokeExact());
        } catch (RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    private void check(String call, int code) throws Throwable {
        if (code != 0) {
            MemorySegment text = (MemorySegment) errorString.invokeExact(code);
            throw new IllegalStateException(call + " failed: CUDA error " + code + " "
                    + (text.equals(MemorySegment.NULL)
                            ? ""
                            : text.reinterpret(256).getString(0)));
        }
    }

    private static MemorySegment find(SymbolLookup lookup, String name) {
        return lookup.find(name).orElseThrow(() -> new IllegalStateException("libcudart lacks " + name));
    }
}
