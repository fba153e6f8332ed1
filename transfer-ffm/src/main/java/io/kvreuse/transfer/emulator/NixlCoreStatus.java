package io.kvreuse.transfer.emulator;

/**
 * NIXL's C++ error statuses (not the C-ABI codes): what the emulator's core fails with before its C
 * wrapper translates the status under the selected {@link ErrorConvention}.
 */
public enum NixlCoreStatus {
    NOT_POSTED(-1),
    INVALID_PARAM(-2),
    BACKEND(-3),
    NOT_FOUND(-4),
    MISMATCH(-5),
    NOT_ALLOWED(-6),
    REPOST_ACTIVE(-7),
    UNKNOWN(-8),
    NOT_SUPPORTED(-9),
    REMOTE_DISCONNECT(-10),
    CANCELED(-11);

    private final int value;

    NixlCoreStatus(int value) {
        this.value = value;
    }

    public int value() {
        return value;
    }
}
