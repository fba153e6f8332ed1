package io.kvreuse.agent;

import io.kvreuse.transfer.MemoryKind;
import io.kvreuse.transfer.NixlAgent;
import io.kvreuse.transfer.RegisteredRegion;
import io.kvreuse.transfer.SharedMemoryRegion;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * {@code shm://<name>}: an engine's "GPU" region in emulation, {@code /dev/shm/kvreuse-<name>},
 * mapped with {@link SharedMemoryRegion#open}. The stand-in for a CUDA IPC import.
 */
final class SharedMemoryImporter implements RegionImporter {

    static final String SCHEME = "shm";

    @Override
    public String scheme() {
        return SCHEME;
    }

    @Override
    public String unavailableReason() {
        return "";
    }

    @Override
    public ImportedRegion open(String regionRef) {
        String name = regionRef.substring((SCHEME + "://").length());
        Path path;
        try {
            path = SharedMemoryRegion.pathFor(name);
        } catch (IllegalArgumentException e) {
            throw new PartRefusedException("region " + regionRef + " has an invalid name: " + e.getMessage());
        }
        Object identity = identity(path);
        if (identity == null) {
            throw new PartRefusedException("region " + regionRef + " does not exist on this host (" + path + ")");
        }
        try {
            return new Imported(regionRef, path, identity, SharedMemoryRegion.open(name));
        } catch (RuntimeException e) {
            throw new PartRefusedException("cannot map region " + regionRef + ": " + e.getMessage(), e);
        }
    }

    /** The file's identity (inode), which changes when an engine recreates a region under the same name. */
    static @Nullable Object identity(Path path) {
        try {
            BasicFileAttributes attrs = Files.readAttributes(path, BasicFileAttributes.class);
            return Objects.requireNonNullElse(attrs.fileKey(), attrs.creationTime());
        } catch (IOException missing) {
            return null;
        }
    }

    private record Imported(String regionRef, Path path, Object identity, SharedMemoryRegion region)
            implements ImportedRegion {

        @Override
        public long size() {
            return region.size();
        }

        @Override
        public MemoryKind kind() {
            return MemoryKind.DRAM;
        }

        @Override
        public boolean isCurrent() {
            return identity.equals(SharedMemoryImporter.identity(path));
        }

        @Override
        public RegisteredRegion register(NixlAgent agent, long devId) {
            return agent.register(region, MemoryKind.DRAM, devId);
        }

        @Override
        public void close() {
            region.close();
        }
    }
}
