package io.kvreuse.agent;

import io.kvreuse.transfer.HandleClosedException;
import io.kvreuse.transfer.MemoryKind;
import io.kvreuse.transfer.NixlAgent;
import io.kvreuse.transfer.RegisteredRegion;
import io.kvreuse.transfer.cuda.CudaException;
import io.kvreuse.transfer.cuda.CudaIpc;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;

/**
 * {@code cuda-ipc://<gpuOrdinal>/<handle>?size=<bytes>}: a region an engine exported with {@code
 * cudaIpcGetMemHandle} (the 64-byte handle in URL-safe base64), opened here with {@code
 * cudaIpcOpenMemHandle} through {@code transfer-ffm} and registered with NIXL as VRAM. It needs
 * the CUDA runtime: without {@code libcudart} it is unavailable and says so at boot.
 */
final class CudaIpcImporter implements RegionImporter {

    static final String SCHEME = "cuda-ipc";
    private static final List<Path> STANDARD_DIRS = List.of(
            Path.of("/usr/local/cuda/lib64"),
            Path.of("/usr/local/cuda/targets/x86_64-linux/lib"),
            Path.of("/usr/lib/x86_64-linux-gnu"),
            Path.of("/usr/lib64"));

    private final @Nullable Path runtime;
    private final String reason;
    private final GpuThreads threads;

    CudaIpcImporter(GpuThreads threads) {
        this(defaultRuntime(), searchPath(), threads);
    }

    CudaIpcImporter(List<Path> searchPath) {
        this(findRuntime(searchPath).stream().findFirst().orElse(null), searchPath, GpuThreads.CALLER);
    }

    /** With an explicit runtime library (tests use a stand-in built from C). */
    CudaIpcImporter(@Nullable Path runtime, List<Path> searchedFor) {
        this(runtime, searchedFor, GpuThreads.CALLER);
    }

    CudaIpcImporter(@Nullable Path runtime, List<Path> searchedFor, GpuThreads threads) {
        this.runtime = runtime;
        this.threads = threads;
        if (runtime == null) {
            this.reason = "libcudart.so not found in " + searchedFor
                    + ": install the CUDA runtime or add its directory to LD_LIBRARY_PATH";
        } else {
            String problem = CudaIpc.unavailableReason(runtime);
            this.reason = problem == null ? "" : problem;
        }
    }

    @Override
    public String scheme() {
        return SCHEME;
    }

    @Override
    public String unavailableReason() {
        return reason;
    }

    @Override
    public ImportedRegion open(String regionRef) {
        if (!reason.isEmpty() || runtime == null) {
            throw new PartRefusedException("cannot import " + SCHEME + " region: " + reason);
        }
        Ref ref = Ref.parse(regionRef);
        CudaIpc ipc = CudaIpc.open(runtime);
        try {
            CudaIpc.Mapping mapping = threads.call(
                    ref.device(), "cudaIpcOpenMemHandle", () -> ipc.importHandle(ref.device(), ref.handle()));
            return new Imported(regionRef, ref.size(), mapping, threads);
        } catch (CudaException e) {
            throw new PartRefusedException(
                    "cannot import " + regionRef.substring(0, regionRef.indexOf('/', 11) + 1) + "…: " + e.getMessage());
        }
    }

    /** The parts of a {@code cuda-ipc://} reference. */
    record Ref(int device, byte[] handle, long size) {

        static Ref parse(String regionRef) {
            try {
                URI uri = URI.create(regionRef);
                int device = Integer.parseInt(uri.getHost() == null ? uri.getAuthority() : uri.getHost());
                byte[] handle = Base64.getUrlDecoder().decode(uri.getPath().substring(1));
                String query = uri.getQuery() == null ? "" : uri.getQuery();
                long size = -1;
                for (String pair : query.split("&")) {
                    if (pair.startsWith("size=")) {
                        size = Long.parseLong(pair.substring(5));
                    }
                }
                if (device < 0 || handle.length != CudaIpc.HANDLE_BYTES || size <= 0) {
                    throw new IllegalArgumentException("device, 64-byte handle and size are required");
                }
                return new Ref(device, handle, size);
            } catch (RuntimeException e) {
                throw new PartRefusedException(
                        "malformed " + SCHEME + " region reference (want cuda-ipc://<gpu>/<base64 handle>"
                                + "?size=<bytes>): " + e.getMessage());
            }
        }
    }

    private record Imported(String regionRef, long size, CudaIpc.Mapping mapping, GpuThreads threads)
            implements ImportedRegion {

        @Override
        public MemoryKind kind() {
            return MemoryKind.VRAM;
        }

        /** An engine that re-exports its memory publishes a new handle, hence a new reference. */
        @Override
        public boolean isCurrent() {
            return true;
        }

        /** Imported memory: the agent may use it as its local side or in its loopback only. */
        @Override
        public RegisteredRegion register(NixlAgent agent, long devId) {
            return agent.registerImported(MemoryKind.VRAM, mapping.address(), size, devId);
        }

        @Override
        public void close() {
            try {
                threads.call(mapping.device(), "cudaIpcCloseMemHandle", () -> {
                    mapping.close();
                    return null;
                });
            } catch (HandleClosedException agentGone) {
                mapping.close(); // shutting down: the agent thread is gone, close from here
            }
        }
    }

    /** The CUDA runtime on this host's library path, or null without one. */
    static @Nullable Path defaultRuntime() {
        return findRuntime(searchPath()).stream().findFirst().orElse(null);
    }

    static List<Path> findRuntime(List<Path> dirs) {
        List<Path> found = new ArrayList<>();
        for (Path dir : dirs) {
            try (Stream<Path> files = Files.list(dir)) {
                files.filter(f -> f.getFileName().toString().startsWith("libcudart.so"))
                        .sorted()
                        .forEach(found::add);
            } catch (IOException | RuntimeException absent) {
                // not a directory here
            }
        }
        return found;
    }

    private static List<Path> searchPath() {
        List<Path> dirs = new ArrayList<>();
        String ld = System.getenv("LD_LIBRARY_PATH");
        if (ld != null) {
            for (String d : ld.split(":")) {
                if (!d.isBlank()) {
                    dirs.add(Path.of(d));
                }
            }
        }
        dirs.addAll(STANDARD_DIRS);
        return dirs;
    }
}
