package io.kvreuse.transfer;

import static java.lang.foreign.ValueLayout.ADDRESS;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * One native NIXL handle with the arena that owns its Java-side allocations. Closing is idempotent
 * and runs the release call once; using a closed handle throws instead of passing a dangling
 * pointer to native code. Created, used and closed only on the agent thread.
 */
final class NativeHandle {

    /** The native call that frees the handle; it may throw a mapped {@link NixlException}. */
    @FunctionalInterface
    interface Release {
        void release(MemorySegment pointer);
    }

    private final String description;
    private final Arena arena;
    private final Release release;
    private MemorySegment pointer;
    private volatile boolean closed;

    NativeHandle(String description, Arena arena, MemorySegment pointer, Release release) {
        this.description = description;
        this.arena = arena;
        this.pointer = pointer;
        this.release = release;
    }

    /** Allocates out-parameter slots, creates the handle, and takes ownership of the arena. */
    static NativeHandle create(String description, Creator creator, Release release) {
        Arena arena = Arena.ofConfined();
        try {
            MemorySegment out = arena.allocate(ADDRESS);
            creator.create(arena, out);
            return new NativeHandle(description, arena, out.get(ADDRESS, 0), release);
        } catch (RuntimeException | Error e) {
            arena.close();
            throw e;
        }
    }

    /** Fills {@code out} with the new handle; throws the mapped exception on failure. */
    @FunctionalInterface
    interface Creator {
        void create(Arena arena, MemorySegment out);
    }

    MemorySegment pointer(String operation) {
        if (closed) {
            throw new HandleClosedException(operation, description, "the handle is closed");
        }
        return pointer;
    }

    Arena arena() {
        return arena;
    }

    String description() {
        return description;
    }

    boolean isClosed() {
        return closed;
    }

    /** Releases the native handle once; the arena is closed even if the release call fails. */
    void close() {
        if (closed) {
            return;
        }
        closed = true;
        MemorySegment released = pointer;
        pointer = MemorySegment.NULL;
        try {
            release.release(released);
        } finally {
            arena.close();
        }
    }
}
