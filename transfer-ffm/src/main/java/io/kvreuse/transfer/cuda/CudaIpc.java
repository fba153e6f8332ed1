package io.kvreuse.transfer.cuda;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;

/**
 * Opens {@code cudaIpcMemHandle_t}s exported by engines ({@code cudaIpcGetMemHandle}) in this
 * process, the node agent's import of a same-host engine's GPU region. Binds four functions of the
 * CUDA runtime's C ABI ({@code cudaSetDevice}, {@code cudaIpcOpenMemHandle}, {@code
 * cudaIpcCloseMemHandle}, {@code cudaGetErrorString}); the library path is configuration, loaded
 * once per path, and a missing library or symbol is one clear reason.
 */
public final class CudaIpc {

    /** Size of {@code cudaIpcMemHandle_t}: an opaque 64-byte struct passed by value. */
    public static final int HANDLE_BYTES = 64;

    private static final int LAZY_ENABLE_PEER_ACCESS = 1;
    private static final StructLayout HANDLE = MemoryLayout.structLayout(
            MemoryLayout.sequenceLayout(HANDLE_BYTES, ValueLayout.JAVA_BYTE).withName("reserved"));
    private static final Map<Path, Object> LOADED = new ConcurrentHashMap<>();

    private final MethodHandle setDevice;
    private final MethodHandle openHandle;
    private final MethodHandle closeHandle;
    private final MethodHandle errorString;

    private CudaIpc(SymbolLookup lookup) {
        Linker linker = Linker.nativeLinker();
        setDevice = bind(
                linker, lookup, "cudaSetDevice", FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));
        openHandle = bind(
                linker,
                lookup,
                "cudaIpcOpenMemHandle",
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, HANDLE, ValueLayout.JAVA_INT));
        closeHandle = bind(
                linker,
                lookup,
                "cudaIpcCloseMemHandle",
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS));
        errorString = bind(
                linker, lookup, "cudaGetErrorString", FunctionDescriptor.of(ValueLayout.ADDRESS, ValueLayout.JAVA_INT));
    }

    /** Why the CUDA runtime at {@code library} cannot be used here, or null when it can. */
    public static @Nullable String unavailableReason(Path library) {
        return load(library) instanceof String reason ? reason : null;
    }

    /** The runtime at {@code library}; throws {@link IllegalStateException} with the reason when unusable. */
    public static CudaIpc open(Path library) {
        Object loaded = load(library);
        if (loaded instanceof CudaIpc ipc) {
            return ipc;
        }
        throw new IllegalStateException((String) loaded);
    }

    private static Object load(Path library) {
        return LOADED.computeIfAbsent(library.toAbsolutePath().normalize(), CudaIpc::attempt);
    }

    private static Object attempt(Path library) {
        if (!Files.isRegularFile(library)) {
            return "CUDA runtime " + library + " not found: install it or point the agent at libcudart.so";
        }
        SymbolLookup lookup;
        try {
            lookup = SymbolLookup.libraryLookup(library, Arena.global());
        } catch (IllegalArgumentException e) {
            return "cannot load CUDA runtime " + library + ": " + e.getMessage();
        } catch (IllegalCallerException e) {
            return "native access is not enabled: run java with --enable-native-access=ALL-UNNAMED";
        }
        for (String symbol :
                new String[] {"cudaSetDevice", "cudaIpcOpenMemHandle", "cudaIpcCloseMemHandle", "cudaGetErrorString"}) {
            if (lookup.find(symbol).isEmpty()) {
                return library + " lacks " + symbol + ": it is not a CUDA runtime library";
            }
        }
        try {
            return new CudaIpc(lookup);
        } catch (IllegalCallerException e) {
            return "native access is not enabled: run java with --enable-native-access=ALL-UNNAMED";
        }
    }

    /**
     * Makes {@code device} current on the calling thread ({@code cudaSetDevice}): the node agent
     * runs it first on each NIXL agent's thread, so registrations and copies there see their GPU.
     */
    public void setDevice(int device) {
        try {
            check("cudaSetDevice", (int) setDevice.invokeExact(device));
        } catch (CudaException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException("cudaSetDevice failed", t);
        }
    }

    /**
     * Maps an engine's exported region on {@code device} (made current on the calling thread first:
     * call it from the thread that will use the device, as UCX requires).
     */
    public Mapping importHandle(int device, byte[] handle) {
        if (handle.length != HANDLE_BYTES) {
            throw new IllegalArgumentException(
                    "a cudaIpcMemHandle_t has " + HANDLE_BYTES + " bytes, not " + handle.length);
        }
        try (Arena call = Arena.ofConfined()) {
            check("cudaSetDevice", (int) setDevice.invokeExact(device));
            MemorySegment out = call.allocate(ValueLayout.ADDRESS);
            MemorySegment h = call.allocate(HANDLE);
            h.copyFrom(MemorySegment.ofArray(handle));
            check("cudaIpcOpenMemHandle", (int) openHandle.invokeExact(out, h, LAZY_ENABLE_PEER_ACCESS));
            return new Mapping(device, out.get(ValueLayout.ADDRESS, 0).address());
        } catch (CudaException | IllegalArgumentException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException("CUDA IPC import failed", t);
        }
    }

    private void check(String operation, int code) throws Throwable {
        if (code != 0) {
            MemorySegment text = (MemorySegment) errorString.invokeExact(code);
            String message = text.equals(MemorySegment.NULL)
                    ? "unknown error"
                    : text.reinterpret(1024).getString(0);
            throw new CudaException(operation, code, message);
        }
    }

    /** An imported region: its device address, until {@link #close()} unmaps it (once). */
    public final class Mapping implements AutoCloseable {

        private final int device;
        private final long address;
        private final AtomicBoolean closed = new AtomicBoolean();

        private Mapping(int device, long address) {
            this.device = device;
            this.address = address;
        }

        public int device() {
            return device;
        }

        /** The device address, for registering the region with NIXL as VRAM. */
        public long address() {
            if (closed.get()) {
                throw new IllegalStateException("the CUDA IPC mapping of device " + device + " is closed");
            }
            return address;
        }

        @Override
        public void close() {
            if (closed.compareAndSet(false, true)) {
                try {
                    check("cudaSetDevice", (int) setDevice.invokeExact(device));
                    check("cudaIpcCloseMemHandle", (int) closeHandle.invokeExact(MemorySegment.ofAddress(address)));
                } catch (CudaException e) {
                    throw e;
                } catch (Throwable t) {
                    throw new IllegalStateException("CUDA IPC close failed", t);
                }
            }
        }
    }

    private static MethodHandle bind(Linker linker, SymbolLookup lookup, String name, FunctionDescriptor descriptor) {
        return linker.downcallHandle(lookup.find(name).orElseThrow(), descriptor);
    }
}
