package io.kvreuse.agent;

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

    CudaIpcImporter() {
        this(searchPath());
    }

    CudaIpcImporter(List<Path> searchPath) {
        this(findRuntime(searchPath).stream().findFirst().orElse(null), searchPath);
    }

    /** With an explicit runtime library (tests use a stand-in built from C). */
    CudaIpcImporter(@Nullable Path runtime, List<Path> searchedFor) {
        this.runtime = runtime;
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
        try {
            return new Imported(regionRef, ref.size(), CudaIpc.open(runtime).importHandle(ref.device(), ref.handle()));
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

    private record Imported(String regionRef, long size, CudaIpc.Mapping mapping) implements ImportedRegion {

        @Override
        public MemoryKind kind() {
            return MemoryKind.VRAM;
        }

        /** An engine that re-exports its memory publishes a new handle, hence a new reference. */
        @Override
        public boolean isCurrent() {
            return true;
        }

        @Override
        public RegisteredRegion register(NixlAgent agent, long devId) {
            return agent.register(MemoryKind.VRAM, mapping.address(), size, devId);
        }

        @Override
        public void close() {
            mapping.close();
        }
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
