package io.kvreuse.agent;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * {@code cuda-ipc://<gpuOrdinal>/<handle>}: a region exported by an engine with {@code
 * cudaIpcGetMemHandle}, opened here with {@code cudaIpcOpenMemHandle} on the agent's thread for that
 * GPU. It needs the CUDA runtime; without {@code libcudart} it is unavailable and says so at boot.
 * The opening itself belongs in {@code transfer-ffm} (the app never binds native code), which does
 * not bind the CUDA runtime yet: until it does, this importer refuses with that reason even where
 * {@code libcudart} is present, and parts naming such regions fail cleanly without touching memory.
 */
final class CudaIpcImporter implements RegionImporter {

    static final String SCHEME = "cuda-ipc";
    private static final List<Path> STANDARD_DIRS = List.of(
            Path.of("/usr/local/cuda/lib64"),
            Path.of("/usr/local/cuda/targets/x86_64-linux/lib"),
            Path.of("/usr/lib/x86_64-linux-gnu"),
            Path.of("/usr/lib64"));

    private final String reason;

    CudaIpcImporter() {
        this(searchPath());
    }

    CudaIpcImporter(List<Path> searchPath) {
        this.reason = findRuntime(searchPath).isEmpty()
                ? "libcudart.so not found in " + searchPath
                        + ": install the CUDA runtime or add its directory to LD_LIBRARY_PATH"
                : "the CUDA IPC import needs a CUDA runtime binding in transfer-ffm, which this build does not"
                        + " include; run engines with shm:// regions (emulation) or a build with CUDA support";
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
        throw new PartRefusedException("cannot import " + SCHEME + " region: " + reason);
    }

    static List<Path> findRuntime(List<Path> dirs) {
        List<Path> found = new ArrayList<>();
        for (Path dir : dirs) {
            try (Stream<Path> files = Files.list(dir)) {
                files.filter(f -> f.getFileName().toString().startsWith("libcudart.so"))
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
