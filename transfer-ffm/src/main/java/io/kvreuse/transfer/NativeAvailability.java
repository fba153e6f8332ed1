package io.kvreuse.transfer;

import java.nio.file.Path;

/**
 * Whether the configured NIXL C library can be used in this JVM, and if not, the one reason with
 * its fix. Call {@link #check} at application start so a misconfiguration fails at boot.
 *
 * @param available true when the library loaded and exports every function the engine needs
 * @param library the library path that was checked
 * @param reason empty when available; otherwise what is wrong and how to fix it
 */
public record NativeAvailability(boolean available, Path library, String reason) {

    /** Loads (once per path) and checks the library named by {@code options}. */
    public static NativeAvailability check(TransferOptions options) {
        return NativeLibraries.load(options.library()).availability();
    }

    /** Throws {@link NativeUnavailableException} carrying the reason when unavailable. */
    public NativeAvailability requireAvailable() {
        if (!available) {
            throw new NativeUnavailableException(this);
        }
        return this;
    }

    static NativeAvailability availableAt(Path library) {
        return new NativeAvailability(true, library, "");
    }

    static NativeAvailability unavailable(Path library, String reason) {
        return new NativeAvailability(false, library, reason);
    }
}
