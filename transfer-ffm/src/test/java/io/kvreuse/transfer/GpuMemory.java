package io.kvreuse.transfer;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import io.kvreuse.transfer.emulator.NixlEmulator;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.jspecify.annotations.Nullable;

/**
 * GPU memory for the contract tests: real device memory ({@code cudaMalloc} on device 0) when
 * {@code -Dkvreuse.cuda.runtime=/path/libcudart.so} names a CUDA runtime, host memory standing in
 * for it when the library under test is the emulator (which accepts host memory as VRAM), and
 * nothing otherwise: a real NIXL refuses to register host memory as VRAM.
 */
final class GpuMemory implements AutoCloseable {

    static final String RUNTIME_PROPERTY = "kvreuse.cuda.runtime";
    private static final int HOST_TO_DEVICE = 1;
    private static final int DEVICE_TO_HOST = 2;

    /** A region of GPU memory (or its stand-in) with host-side access for filling and checking. */
    interface Buffer {
        long address();

        void write(long offset, byte[] bytes);

        byte[] read(long offset, int length);
    }

    private final @Nullable Cuda cuda;
    private final TestMemory host = new TestMemory();
    private final List<Long> allocations = new ArrayList<>();

    private GpuMemory(@Nullable Cuda cuda) {
        this.cuda = cuda;
    }

    /** The GPU memory the tests of {@code library} can use, or null when there is none. */
    static @Nullable GpuMemory forLibrary(Path library) {
        String runtime = System.getProperty(RUNTIME_PROPERTY);
        if (runtime != null) {
            return new GpuMemory(new Cuda(Path.of(runtime)));
        }
        return library.equals(NixlEmulator.library()) ? new GpuMemory(null) : null;
    }

    /** Makes device 0 current on the calling thread (the agent thread's setup hook). */
    void makeCurrent() {
        if (cuda != null) {
            cuda.call("cudaSetDevice", cuda.setDevice, 0);
        }
    }

    Buffer allocate(long size) {
        if (cuda == null) {
            SharedMemoryRegion region = host.create(size);
            return new Buffer() {
                public long address() {
                    return region.address();
                }

                public void write(long offset, byte[] bytes) {
                    region.write(offset, bytes);
                }

                public byte[] read(long offset, int length) {
                    return region.read(offset, length);
                }
            };
        }
        Cuda c = cuda;
        long address = c.malloc(size);
        allocations.add(address);
        return new Buffer() {
            public long address() {
                return address;
            }

            public void write(long offset, byte[] bytes) {
                c.copy(address + offset, bytes, HOST_TO_DEVICE);
            }

            public byte[] read(long offset, int length) {
                byte[] bytes = new byte[length];
                c.copy(address + offset, bytes, DEVICE_TO_HOST);
                return bytes;
            }
        };
    }

    @Override
    public void close() {
        if (cuda != null) {
            allocations.forEach(cuda::free);
        }
        host.close();
    }

    /** The four runtime calls the tests need, bound for the test only. */
    private static final class Cuda {
        final MethodHandle setDevice;
        final MethodHandle malloc;
        final MethodHandle free;
        final MethodHandle memcpy;

        Cuda(Path library) {
            SymbolLookup lookup = SymbolLookup.libraryLookup(library, Arena.global());
            Linker linker = Linker.nativeLinker();
            setDevice = linker.downcallHandle(
                    lookup.findOrThrow("cudaSetDevice"), FunctionDescriptor.of(JAVA_INT, JAVA_INT));
            malloc = linker.downcallHandle(
                    lookup.findOrThrow("cudaMalloc"), FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG));
            free = linker.downcallHandle(lookup.findOrThrow("cudaFree"), FunctionDescriptor.of(JAVA_INT, ADDRESS));
            memcpy = linker.downcallHandle(
                    lookup.findOrThrow("cudaMemcpy"),
                    FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_LONG, JAVA_INT));
        }

        long malloc(long size) {
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment out = arena.allocate(ADDRESS);
                check("cudaMalloc", (int) invoke(() -> (int) malloc.invokeExact(out, size)));
                return out.get(ADDRESS, 0).address();
            }
        }

        void free(long address) {
            invoke(() -> (int) free.invokeExact(MemorySegment.ofAddress(address)));
        }

        void copy(long device, byte[] bytes, int direction) {
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment buffer = arena.allocate(bytes.length);
                MemorySegment gpu = MemorySegment.ofAddress(device);
                if (direction == HOST_TO_DEVICE) {
                    buffer.copyFrom(MemorySegment.ofArray(bytes));
                    check("cudaMemcpy", invoke(() ->
                            (int) memcpy.invokeExact(gpu, buffer, (long) bytes.length, direction)));
                } else {
                    check("cudaMemcpy", invoke(() ->
                            (int) memcpy.invokeExact(buffer, gpu, (long) bytes.length, direction)));
                    MemorySegment.ofArray(bytes).copyFrom(buffer);
                }
            }
        }

        void call(String name, MethodHandle handle, int argument) {
            check(name, invoke(() -> (int) handle.invokeExact(argument)));
        }

        private static void check(String call, int code) {
            if (code != 0) {
                throw new IllegalStateException(call + " failed with CUDA error " + code);
            }
        }

        private interface Downcall {
            int run() throws Throwable;
        }

        private static int invoke(Downcall call) {
            try {
                return call.run();
            } catch (Throwable t) {
                throw new IllegalStateException(t);
            }
        }
    }

    static String uniqueName(String role) {
        return role + "-" + UUID.randomUUID();
    }
}
