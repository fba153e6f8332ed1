package io.kvreuse.transfer;

import java.lang.foreign.Arena;
import java.lang.foreign.SymbolLookup;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;

/**
 * Loads each NIXL library path once per JVM and remembers the outcome, so an unavailability reason
 * is computed and logged once, however often callers ask.
 */
final class NativeLibraries {

    private static final System.Logger LOG = System.getLogger(NativeLibraries.class.getName());
    private static final Map<Path, Loaded> LOADED = new ConcurrentHashMap<>();

    private NativeLibraries() {}

    /** A load outcome: a bound library, or why there is none. */
    record Loaded(NativeAvailability availability, @Nullable NixlCapi capi) {

        NixlCapi require() {
            availability.requireAvailable();
            if (capi == null) {
                throw new IllegalStateException("available library without bindings: " + availability);
            }
            return capi;
        }
    }

    static Loaded load(Path library) {
        return LOADED.computeIfAbsent(library.toAbsolutePath().normalize(), NativeLibraries::attempt);
    }

    private static Loaded attempt(Path library) {
        String problem = problemBeforeLoading(library);
        if (problem != null) {
            return unavailable(library, problem);
        }
        SymbolLookup lookup;
        try {
            // Arena.global(): NIXL keeps threads and callbacks alive, so the library is never unloaded.
            lookup = SymbolLookup.libraryLookup(library, Arena.global());
        } catch (IllegalArgumentException e) {
            return unavailable(
                    library,
                    "cannot load " + library + " (" + e.getMessage()
                            + "): make NIXL's own dependencies (libnixl.so, UCX) resolvable through"
                            + " LD_LIBRARY_PATH or the library's RUNPATH");
        } catch (IllegalCallerException e) {
            return unavailable(library, nativeAccessReason());
        }
        List<String> missing = Arrays.stream(NixlFunction.values())
                .map(NixlFunction::symbol)
                .filter(symbol -> lookup.find(symbol).isEmpty())
                .toList();
        if (!missing.isEmpty()) {
            return unavailable(
                    library,
                    library + " does not export " + String.join(", ", missing)
                            + ": point TransferOptions.library at NIXL's C ABI library libnixl_capi.so"
                            + " (NIXL 1.4.0 or newer)");
        }
        return new Loaded(NativeAvailability.availableAt(library), new NixlCapi(lookup));
    }

    private static @Nullable String problemBeforeLoading(Path library) {
        if (!NativeLibraries.class.getModule().isNativeAccessEnabled()) {
            return nativeAccessReason();
        }
        if (!Files.isRegularFile(library)) {
            return "NIXL C library not found at " + library
                    + ": install NIXL and set TransferOptions.library to its libnixl_capi.so"
                    + " (default prefix /opt/nvidia/nvda_nixl/lib/x86_64-linux-gnu); for CPU-only"
                    + " runs use io.kvreuse.transfer.emulator.NixlEmulator.library()";
        }
        return null;
    }

    private static String nativeAccessReason() {
        Module module = NativeLibraries.class.getModule();
        String target = module.isNamed() ? module.getName() : "ALL-UNNAMED";
        return "native access is not enabled for " + module + ": run java with --enable-native-access=" + target;
    }

    private static Loaded unavailable(Path library, String reason) {
        LOG.log(System.Logger.Level.WARNING, "NIXL transfers unavailable: {0}", reason);
        return new Loaded(NativeAvailability.unavailable(library, reason), null);
    }
}
