package io.kvreuse.transfer.emulator;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/**
 * Finds the kvreuse NIXL emulator ({@code libkvreuse_nixl_emulator.so}), a CPU-only stand-in for
 * {@code libnixl_capi.so} built from {@code src/main/c/nixl_emulator.c}. Lookup order: the system
 * property {@value #LIBRARY_PROPERTY}, then the jar resource {@value #RESOURCE} (used in place when it
 * is a file, extracted to a temporary file when it is inside a jar).
 */
public final class NixlEmulator {

    /** System property naming the emulator library explicitly. */
    public static final String LIBRARY_PROPERTY = "kvreuse.nixl.emulator";

    /** Classpath location of the emulator packaged in the transfer-ffm jar. */
    public static final String RESOURCE = "native/linux-x86_64/libkvreuse_nixl_emulator.so";

    private NixlEmulator() {}

    /** The emulator library path, extracting it from the jar on first use if needed. */
    public static Path library() {
        return Holder.LIBRARY;
    }

    /** Test controls of the emulator loaded from {@link #library()}. */
    public static EmulatorControl control() {
        return EmulatorControl.of(library());
    }

    private static final class Holder {
        static final Path LIBRARY = locate();
    }

    private static Path locate() {
        String configured = System.getProperty(LIBRARY_PROPERTY);
        if (configured != null && Files.isRegularFile(Path.of(configured))) {
            return Path.of(configured).toAbsolutePath();
        }
        URL resource = NixlEmulator.class.getClassLoader().getResource(RESOURCE);
        if (resource == null) {
            throw new IllegalStateException(RESOURCE + " is not on the classpath and -D" + LIBRARY_PROPERTY
                    + " is not set: build transfer-ffm with ./mvnw (it compiles the emulator with gcc)");
        }
        if ("file".equals(resource.getProtocol())) {
            try {
                return Path.of(resource.toURI());
            } catch (URISyntaxException e) {
                throw new IllegalStateException("unexpected resource URL " + resource, e);
            }
        }
        return extract(resource);
    }

    private static Path extract(URL resource) {
        try (InputStream in = resource.openStream()) {
            Path directory = Files.createTempDirectory("kvreuse-nixl-emulator");
            Path library = directory.resolve("libkvreuse_nixl_emulator.so");
            Files.copy(in, library, StandardCopyOption.REPLACE_EXISTING);
            library.toFile().deleteOnExit();
            directory.toFile().deleteOnExit();
            return library;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot extract " + resource, e);
        }
    }
}
