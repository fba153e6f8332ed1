package io.kvreuse.system;

import java.io.IOException;
import java.io.Reader;
import java.io.Writer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Properties;

/**
 * Measured numbers of the system scenarios, collected in {@code target/system-results.properties}
 * of the system-test module as {@code <scenario>.<size>.<name>=<value>}; each run replaces its own
 * keys and keeps the others.
 */
final class SystemResults {

    static final Path FILE = Path.of(System.getProperty("kvreuse.system.results", "target/system-results.properties"));

    private SystemResults() {}

    static synchronized void record(String scenario, Map<String, ?> values) throws IOException {
        Properties p = new Properties();
        if (Files.exists(FILE)) {
            try (Reader r = Files.newBufferedReader(FILE)) {
                p.load(r);
            }
        }
        String prefix = scenario + "." + SystemFleet.Size.current().name() + ".";
        values.forEach((k, v) -> p.setProperty(prefix + k, String.valueOf(v)));
        Files.createDirectories(FILE.toAbsolutePath().getParent());
        try (Writer w = Files.newBufferedWriter(FILE)) {
            p.store(
                    w,
                    "kvreuse system scenarios: measured on "
                            + Runtime.getRuntime().availableProcessors() + " CPUs");
        }
    }
}
