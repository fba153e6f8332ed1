package io.kvreuse.sim.demo;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** The kvreuse jar running as a child process in one role, its output in a log file. */
final class JarProcess {

    private static final Duration STARTUP = Duration.ofSeconds(180);
    private static final Path SETSID = Path.of("/usr/bin/setsid");

    private final String name;
    private final int port;
    private final Path log;
    private final Process process;

    private JarProcess(String name, int port, Path log, Process process) {
        this.name = name;
        this.port = port;
        this.log = log;
        this.process = process;
    }

    /**
     * Starts {@code java -jar jar} with the given environment (any inherited {@code KVREUSE_*} and
     * {@code SPRING_*} variables removed) and arguments, and waits until it reports ready.
     */
    static JarProcess start(String name, Path jar, int port, Path logDir, Map<String, String> env, List<String> args)
            throws IOException, InterruptedException {
        Files.createDirectories(logDir);
        Path log = logDir.resolve(name + ".log");
        List<String> cmd = new ArrayList<>();
        if (Files.isExecutable(SETSID)) {
            // a session of its own: Ctrl-C in the terminal reaches the demo only, which then stops
            // the engines, the agent and the control plane in that order
            cmd.add(SETSID.toString());
        }
        cmd.addAll(List.of(java(), "--enable-native-access=ALL-UNNAMED", "-Xmx512m"));
        cmd.addAll(List.of("-jar", jar.toString(), "--server.port=" + port));
        cmd.addAll(args);
        ProcessBuilder pb = new ProcessBuilder(cmd)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
        pb.environment().keySet().removeIf(k -> k.startsWith("KVREUSE_") || k.startsWith("SPRING_"));
        pb.environment().putAll(env);
        JarProcess p = new JarProcess(name, port, log, pb.start());
        p.awaitReady();
        return p;
    }

    String baseUrl() {
        return "http://localhost:" + port;
    }

    Path log() {
        return log;
    }

    private void awaitReady() throws InterruptedException {
        HttpClient client =
                HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
        HttpRequest probe = HttpRequest.newBuilder(URI.create(baseUrl() + "/actuator/health/readiness"))
                .timeout(Duration.ofSeconds(2))
                .build();
        long deadline = System.nanoTime() + STARTUP.toNanos();
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IllegalStateException(
                        name + " exited with status " + process.exitValue() + " during start; see " + log);
            }
            try {
                if (client.send(probe, HttpResponse.BodyHandlers.discarding()).statusCode() == 200) {
                    return;
                }
            } catch (IOException notYet) {
                // not listening yet
            }
            process.waitFor(250, TimeUnit.MILLISECONDS);
        }
        stop();
        throw new IllegalStateException(name + " was not ready within " + STARTUP + "; see " + log);
    }

    /** SIGTERM (graceful shutdown) and wait; forcibly after a minute. */
    void stop() throws InterruptedException {
        if (process.isAlive()) {
            process.destroy();
            if (!process.waitFor(60, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor();
            }
        }
    }

    static int freePort() {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** {@code port} if nothing listens there, else any free port. */
    static int portOr(int port) {
        if (port == 0) {
            return freePort();
        }
        try (ServerSocket s = new ServerSocket(port)) {
            return port;
        } catch (IOException taken) {
            return freePort();
        }
    }

    private static String java() {
        return ProcessHandle.current()
                .info()
                .command()
                .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    }
}
