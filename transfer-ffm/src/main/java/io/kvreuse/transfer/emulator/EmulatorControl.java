package io.kvreuse.transfer.emulator;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Steers the emulator's process-wide test hooks ({@code kvreuse_emu_*}): fault injection, stalls,
 * dropped notifications, simulated disconnects, the error-code convention, and counters of what
 * actually moved. Only tests and benchmarks use this; a real NIXL library has none of these symbols.
 */
public final class EmulatorControl {

    private static final Linker LINKER = Linker.nativeLinker();
    private static final MethodHandle INT_TO_VOID = LINKER.downcallHandle(FunctionDescriptor.ofVoid(JAVA_INT));
    private static final MethodHandle VOID_TO_VOID = LINKER.downcallHandle(FunctionDescriptor.ofVoid());
    private static final MethodHandle VOID_TO_LONG = LINKER.downcallHandle(FunctionDescriptor.of(JAVA_LONG));
    private static final MethodHandle FAIL_NEXT =
            LINKER.downcallHandle(FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT));
    private static final MethodHandle DISCONNECT =
            LINKER.downcallHandle(FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
    private static final MethodHandle BENCH_MEMCPY =
            LINKER.downcallHandle(FunctionDescriptor.of(JAVA_LONG, ADDRESS, ADDRESS, JAVA_LONG, JAVA_INT));
    private static final Map<Path, EmulatorControl> CONTROLS = new ConcurrentHashMap<>();

    private final SymbolLookup lookup;

    private EmulatorControl(SymbolLookup lookup) {
        this.lookup = lookup;
    }

    /** Controls for the emulator at {@code library}; the same loaded instance NIXL agents use. */
    public static EmulatorControl of(Path library) {
        return CONTROLS.computeIfAbsent(
                library.toAbsolutePath().normalize(),
                path -> new EmulatorControl(SymbolLookup.libraryLookup(path, Arena.global())));
    }

    public void useErrorConvention(ErrorConvention convention) {
        callInt("kvreuse_emu_set_legacy_error_codes", convention == ErrorConvention.LEGACY ? 1 : 0);
    }

    /** The next {@code call} fails with {@code status}, translated by the current convention. */
    public void failNext(EmulatedCall call, NixlCoreStatus status) {
        try {
            int code = (int) FAIL_NEXT.invokeExact(symbol("kvreuse_emu_fail_next"), call.ordinal(), status.value());
            if (code != 0) {
                throw new IllegalStateException("emulator refused fault " + call + "=" + status);
            }
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** Posted transfers stay in progress until {@link #releaseStalledTransfers()}. */
    public void stallTransfers() {
        callInt("kvreuse_emu_stall_transfers", 1);
    }

    public void releaseStalledTransfers() {
        callInt("kvreuse_emu_stall_transfers", 0);
    }

    /** The next {@code count} notifications are lost instead of delivered. */
    public void dropNotifications(int count) {
        callInt("kvreuse_emu_drop_notifications", count);
    }

    /** Completed transfers still report in-progress for this many extra status polls. */
    public void completeAfterExtraPolls(int polls) {
        callInt("kvreuse_emu_set_min_polls", polls);
    }

    /** Agent {@code agentName} loses {@code remoteAgent} at its next call, as after a remote disconnect. */
    public void disconnect(String agentName, String remoteAgent) {
        try (Arena arena = Arena.ofConfined()) {
            int code = (int) DISCONNECT.invokeExact(
                    symbol("kvreuse_emu_disconnect"), arena.allocateFrom(agentName), arena.allocateFrom(remoteAgent));
            if (code != 0) {
                throw new IllegalStateException("emulator refused disconnect: " + code);
            }
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** Clears faults, stalls and counters, and restores the convention from the environment. */
    public void reset() {
        try {
            VOID_TO_VOID.invokeExact(symbol("kvreuse_emu_reset"));
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public long bytesCopied() {
        return counter("kvreuse_emu_bytes_copied");
    }

    public long transfersCompleted() {
        return counter("kvreuse_emu_transfers_completed");
    }

    public long notificationsDelivered() {
        return counter("kvreuse_emu_notifications_delivered");
    }

    public long notificationsDropped() {
        return counter("kvreuse_emu_notifications_dropped");
    }

    /** Times {@code repetitions} plain memcpys in the emulator's own C code: the benchmark's baseline. */
    public Duration benchMemcpy(long destination, long source, long length, int repetitions) {
        try {
            long nanos = (long) BENCH_MEMCPY.invokeExact(
                    symbol("kvreuse_emu_bench_memcpy"),
                    MemorySegment.ofAddress(destination),
                    MemorySegment.ofAddress(source),
                    length,
                    repetitions);
            return Duration.ofNanos(nanos);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    private void callInt(String name, int value) {
        try {
            INT_TO_VOID.invokeExact(symbol(name), value);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    private long counter(String name) {
        try {
            return (long) VOID_TO_LONG.invokeExact(symbol(name));
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    private MemorySegment symbol(String name) {
        return lookup.findOrThrow(name);
    }

    private static RuntimeException rethrow(Throwable t) {
        return t instanceof RuntimeException runtime ? runtime : new IllegalStateException(t);
    }
}
