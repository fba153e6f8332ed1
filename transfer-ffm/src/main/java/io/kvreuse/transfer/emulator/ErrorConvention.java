package io.kvreuse.transfer.emulator;

/** How a NIXL C wrapper turns core statuses into C-ABI codes. */
public enum ErrorConvention {
    /** Builds after 1.4.0: INVALID_PARAM (-1) and NOT_FOUND (-6) pass through, the rest is -2. */
    CURRENT,
    /** NIXL 1.4.0: every error but NO_TELEMETRY collapses to BACKEND (-2). */
    LEGACY
}
