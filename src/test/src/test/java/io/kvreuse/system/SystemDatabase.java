package io.kvreuse.system;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;

/**
 * The PostgreSQL the replicas share: the PostgreSQL binaries from Maven Central (zonky), with a data
 * directory and port of its own, so it can be stopped (a clean fast shutdown, as an operator or a
 * failover would) and started again on the same port and data.
 */
final class SystemDatabase implements AutoCloseable {

    private final Path dataDirectory;
    private final int port;
    private EmbeddedPostgres pg;

    private SystemDatabase(Path dataDirectory, int port) {
        this.dataDirectory = dataDirectory;
        this.port = port;
    }

    static SystemDatabase start(Path dataDirectory) throws IOException {
        SystemDatabase db = new SystemDatabase(dataDirectory, KvReuseProcess.freePort());
        db.start();
        return db;
    }

    /** Starts the server on this database's port and data directory (created the first time). */
    void start() throws IOException {
        Files.createDirectories(dataDirectory);
        pg = EmbeddedPostgres.builder()
                .setDataDirectory(dataDirectory)
                .setCleanDataDirectory(false)
                .setPort(port)
                .setPGStartupWait(Duration.ofSeconds(60))
                .setServerConfig("max_connections", "300")
                .start();
    }

    /** Stops the server (pg_ctl stop, fast mode): every connection is cut. */
    void stop() throws IOException {
        if (pg != null) {
            pg.close();
            pg = null;
        }
    }

    /**
     * Sends {@code signal} ({@code STOP}, {@code CONT}) to the server and every backend: with {@code
     * STOP}, PostgreSQL hangs with every connection open, as on a stalled disk or a frozen VM.
     */
    void signal(String signal) throws IOException, InterruptedException {
        long postmaster = Long.parseLong(Files.readAllLines(dataDirectory.resolve("postmaster.pid"))
                .getFirst()
                .trim());
        java.util.List<Long> pids = new java.util.ArrayList<>(java.util.List.of(postmaster));
        ProcessHandle.of(postmaster).orElseThrow().descendants().forEach(p -> pids.add(p.pid()));
        Signals.send(signal, pids);
    }

    boolean running() {
        return pg != null;
    }

    String jdbcUrl() {
        return "jdbc:postgresql://localhost:" + port + "/postgres";
    }

    Connection connect() throws SQLException {
        return DriverManager.getConnection(jdbcUrl(), "postgres", "postgres");
    }

    @Override
    public void close() throws IOException {
        stop();
    }
}
