package io.kvreuse.system;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** The built kvreuse jar running as a separate process, driven only through HTTP and signals. */
final class KvReuseProcess implements AutoCloseable {

    // two minutes were not always enough on two cores shared by several builds
    private static final Duration STARTUP = Duration.ofSeconds(300);

    private final Path home;
    private final Map<String, String> env;
    private final int port;
    private final Path log;
    private Process process;

    private KvReuseProcess(Path home, Map<String, String> env, int port) {
        this.home = home;
        this.env = env;
        this.port = port;
        this.log = home.resolve("kvreuse-" + port + ".log");
    }

    /** Starts the control plane in its embedded default mode with its data under {@code home}. */
    static KvReuseProcess startEmbedded(Path home) throws IOException, InterruptedException {
        return startEmbedded(home, Map.of());
    }

    /** As {@link #startEmbedded(Path)}, with extra environment (e.g. {@code KVREUSE_LIVENESS_SUSPECTAFTER}). */
    static KvReuseProcess startEmbedded(Path home, Map<String, String> env) throws IOException, InterruptedException {
        KvReuseProcess p = new KvReuseProcess(home, new HashMap<>(env), freePort());
        p.start();
        return p;
    }

    /** Starts the jar as a node agent ({@code kvreuse.role=agent}) configured by {@code env}. */
    static KvReuseProcess startAgent(Path home, Map<String, String> env) throws IOException, InterruptedException {
        Map<String, String> agentEnv = new HashMap<>(env);
        agentEnv.put("KVREUSE_ROLE", "agent");
        KvReuseProcess p = new KvReuseProcess(home, agentEnv, freePort());
        p.start();
        return p;
    }

    /** Starts the control plane with the given environment (e.g. an external database) and its home under {@code home}. */
    static KvReuseProcess start(Path home, Map<String, String> env) throws IOException, InterruptedException {
        Files.createDirectories(home);
        KvReuseProcess p = new KvReuseProcess(home, new HashMap<>(env), freePort());
        p.start();
        return p;
    }

    void start() throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(
                List.of(System.getProperty("kvreuse.java", "java"), "-Xmx512m", "-jar", jar().toString()));
        ProcessBuilder pb = new ProcessBuilder(cmd)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
        pb.environment().keySet().removeIf(k -> k.startsWith("KVREUSE_") || k.startsWith("SPRING_"));
        pb.environment().putAll(env);
        pb.environment().put("KVREUSE_HOME", home.toString());
        pb.environment().put("SERVER_PORT", Integer.toString(port));
        process = pb.start();
        try {
            awaitReady();
        } catch (IOException | InterruptedException | RuntimeException notReady) {
            // a process that never became ready is nobody's to stop: it would outlive the test JVM
            process.destroyForcibly();
            throw notReady;
        }
    }

    private void awaitReady() throws IOException, InterruptedException {
        HttpClient client = HttpClient.newHttpClient();
        long deadline = System.nanoTime() + STARTUP.toNanos();
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IllegalStateException("kvreuse exited with " + process.exitValue() + "; log:\n" + tail());
            }
            try {
                var response = client.send(
                        HttpRequest.newBuilder(URI.create(baseUrl() + "/actuator/health/readiness"))
                                .timeout(Duration.ofSeconds(2))
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
                if (response.statusCode() == 200) {
                    return;
                }
            } catch (IOException notYet) {
                // not listening yet
            }
            process.waitFor(250, TimeUnit.MILLISECONDS);
        }
        throw new IllegalStateException("kvreuse did not become ready within " + STARTUP + "; log:\n" + tail());
    }

    /** SIGTERM and wait: a graceful shutdown. */
    void stop() throws InterruptedException {
        if (process != null && process.isAlive()) {
            process.destroy();
            if (!process.waitFor(60, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor();
            }
        }
    }

    /** SIGKILL: a crash, no shutdown hooks, no graceful drain. Returns once the process is gone. */
    void kill9() throws InterruptedException {
        if (process != null && process.isAlive()) {
            process.destroyForcibly();
            process.waitFor();
        }
    }

    /** Sends {@code signal} (e.g. {@code STOP}, {@code CONT}) to the process. */
    void signal(String signal) throws java.io.IOException, InterruptedException {
        Signals.send(signal, java.util.List.of(process.pid()));
    }

    /** The operating-system process id (for {@code jcmd}). */
    long pid() {
        return process.pid();
    }

    boolean isAlive() {
        return process != null && process.isAlive();
    }

    String baseUrl() {
        return "http://127.0.0.1:" + port;
    }

    Path home() {
        return home;
    }

    String tail() throws IOException {
        if (!Files.exists(log)) {
            return "(no log)";
        }
        List<String> lines = Files.readAllLines(log);
        return String.join("\n", lines.subList(Math.max(0, lines.size() - 80), lines.size()));
    }

    @Override
    public void close() throws InterruptedException {
        stop();
    }

    static Path jar() {
        Path jar = Path.of(System.getProperty("kvreuse.jar", "../../app/target/kvreuse.jar"))
                .toAbsolutePath()
                .normalize();
        if (!Files.isRegularFile(jar)) {
            throw new IllegalStateException("build the jar first (./mvnw verify builds it before these tests): " + jar);
        }
        return jar;
    }

    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }
}
