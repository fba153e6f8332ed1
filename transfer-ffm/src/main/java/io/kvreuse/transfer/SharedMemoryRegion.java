package io.kvreuse.transfer;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Pattern;

/**
 * A named shared-memory region ({@code /dev/shm/kvreuse-<name>}) mapped into this process. In
 * emulation it stands in for an engine's GPU bank: simulated engines fill and verify slots through
 * {@link #write}/{@link #read}, and an agent in any process can register it with
 * {@link NixlAgent#register(SharedMemoryRegion, MemoryKind, long)}.
 */
public final class SharedMemoryRegion implements AutoCloseable {

    private static final Path DEFAULT_DIRECTORY = Path.of("/dev/shm");
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9._-]{1,200}");

    private final String name;
    private final Path path;
    private final Arena arena;
    private final MemorySegment segment;
    private final AtomicInteger registrations = new AtomicInteger();
    private volatile boolean closed;

    private SharedMemoryRegion(String name, Path path, Arena arena, MemorySegment segment) {
        this.name = name;
        this.path = path;
        this.arena = arena;
        this.segment = segment;
    }

    /** Creates (or resizes) {@code /dev/shm/kvreuse-<name>} with {@code size} zeroed-on-growth bytes. */
    public static SharedMemoryRegion create(String name, long size) {
        if (size <= 0) {
            throw new IllegalArgumentException("size must be positive: " + size);
        }
        return map(name, size, StandardOpenOption.CREATE);
    }

    /** Opens an existing region created by this or another process. */
    public static SharedMemoryRegion open(String name) {
        try {
            return map(name, Files.size(pathFor(name)), StandardOpenOption.READ);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot open shared-memory region " + name, e);
        }
    }

    /** The file backing the region named {@code name}. */
    public static Path pathFor(String name) {
        if (!NAME.matcher(name).matches()) {
            throw new IllegalArgumentException("shared-memory names use [A-Za-z0-9._-]: " + name);
        }
        return DEFAULT_DIRECTORY.resolve("kvreuse-" + name);
    }

    private static SharedMemoryRegion map(String name, long size, StandardOpenOption mode) {
        Path path = pathFor(name);
        Arena arena = Arena.ofShared();
        try (FileChannel channel = FileChannel.open(path, mode, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            if (channel.size() != size) {
                channel.truncate(Math.min(channel.size(), size));
                channel.write(java.nio.ByteBuffer.allocate(1), size - 1);
            }
            MemorySegment segment = channel.map(FileChannel.MapMode.READ_WRITE, 0, size, arena);
            return new SharedMemoryRegion(name, path, arena, segment);
        } catch (IOException e) {
            arena.close();
            throw new UncheckedIOException("cannot map shared-memory region " + path, e);
        }
    }

    public String name() {
        return name;
    }

    public Path path() {
        return path;
    }

    public long size() {
        return segment.byteSize();
    }

    /** Where the region is mapped in this process; what NIXL registrations and descriptors use. */
    public long address() {
        return live().address();
    }

    public void write(long offset, byte[] bytes) {
        MemorySegment.copy(bytes, 0, live(), ValueLayout.JAVA_BYTE, offset, bytes.length);
    }

    public byte[] read(long offset, int length) {
        byte[] bytes = new byte[length];
        MemorySegment.copy(live(), ValueLayout.JAVA_BYTE, offset, bytes, 0, length);
        return bytes;
    }

    /** Sets {@code length} bytes from {@code offset} to {@code value}, touching every page. */
    public void fill(long offset, long length, byte value) {
        live().asSlice(offset, length).fill(value);
    }

    /** Unmaps the region; refused while an agent still has it registered. Idempotent. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        if (registrations.get() > 0) {
            throw new IllegalStateException("deregister " + path + " before closing it");
        }
        closed = true;
        arena.close();
    }

    /** Removes the backing file; mappings that exist stay valid until closed. */
    public void unlink() {
        try {
            Files.deleteIfExists(path);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot remove " + path, e);
        }
    }

    void pin() {
        live();
        registrations.incrementAndGet();
    }

    void unpin() {
        registrations.decrementAndGet();
    }

    private MemorySegment live() {
        if (closed) {
            throw new IllegalStateException("shared-memory region " + path + " is closed");
        }
        return segment;
    }
}
