package io.kvreuse.transfer;

import java.nio.file.Path;

/** Prints the availability of the library in args[0]; run in a child JVM with chosen flags. */
public final class AvailabilityProbeMain {

    private AvailabilityProbeMain() {}

    public static void main(String[] args) {
        NativeAvailability availability = NativeAvailability.check(TransferOptions.of(Path.of(args[0])));
        System.out.println(availability.available() + " " + availability.reason());
    }
}
