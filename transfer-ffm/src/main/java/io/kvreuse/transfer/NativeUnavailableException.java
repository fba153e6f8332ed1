package io.kvreuse.transfer;

/** The NIXL C library cannot be used; {@link #availability()} says why and how to fix it. */
public final class NativeUnavailableException extends RuntimeException {

    private final transient NativeAvailability availability;

    NativeUnavailableException(NativeAvailability availability) {
        super(availability.reason());
        this.availability = availability;
    }

    public NativeAvailability availability() {
        return availability;
    }
}
