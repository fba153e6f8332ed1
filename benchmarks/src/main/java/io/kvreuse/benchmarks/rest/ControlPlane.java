package io.kvreuse.benchmarks.rest;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** The built jar as a separate process in its embedded-database mode, with a known operator token. */
final class ControlPlane implements AutoCloseable {

    /**
     * How long the control plane may take to become ready: on two cores shared with other builds its
     * JVM alone has taken two minutes to print its first line, and a benchmark that waits reports a
     * loaded machine instead of failing.
     */
    static final long START_SECONDS = 600;

    final String baseUrl;
    final String operator;
    private final Process process;

    private final Path home;

    private ControlPlane(String baseUrl, String operator, Process process, Path home) {
        this.home = home;
        this.baseUrl = baseUrl;
        this.operator = operator;
        this.process = process;
    }

    static ControlPlane start(Path jar, Path home, String java) throws IOException, InterruptedException {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        String operator = "kvr_bench-operator-" + System.nanoTime();
        List<String> command =
                new java.util.ArrayList<>(List.of(java, "-Xms1g", "-Xmx1g", "--enable-native-access=ALL-UNNAMED"));
        String recording = System.getProperty("kvreuse.bench.jfr");
        if (recording != null) {
            // deep stacks: a reactive call chain is a hundred frames before it reaches kvreuse code
            command.add("-XX:FlightRecorderOptions=stackdepth=256");
            command.add("-XX:StartFlightRecording=filename=" + recording + ",settings=profile,dumponexit=true");
        }
        command.addAll(List.of("-jar", jar.toString()));
        ProcessBuilder pb = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(home.resolve("control-plane.log").toFile());
        pb.environment().put("KVREUSE_HOME", home.toString());
        pb.environment().put("SERVER_PORT", Integer.toString(port));
        pb.environment().put("KVREUSE_BOOTSTRAP_TOKEN", operator);
        pb.environment().put("KVREUSE_LIVENESS_SUSPECTAFTER", "1h");
        pb.environment().put("KVREUSE_LIVENESS_LOSTAFTER", "2h");
        pb.environment().put("LOGGING_LEVEL_IO_KVREUSE", "WARN");
        Process process = pb.start();
        String base = "http://127.0.0.1:" + port;
        HttpClient client = HttpClient.newHttpClient();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(START_SECONDS);
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IllegalStateException("control plane exited; see " + home.resolve("control-plane.log"));
            }
            try {
                var r = client.send(
                        HttpRequest.newBuilder(URI.create(base + "/actuator/health/readiness"))
                                .timeout(Duration.ofSeconds(2))
                                .build(),
                        HttpResponse.BodyHandlers.discarding());
                if (r.statusCode() == 200) {
                    return new ControlPlane(base, operator, process, home);
                }
            } catch (IOException notYet) {
                // still starting
            }
            Thread.sleep(250);
        }
        process.destroyForcibly();
        throw new IllegalStateException(
                "control plane not ready in " + START_SECONDS + " s; see " + home.resolve("control-plane.log"));
    }

    @Override
    public void close() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor();
        }
    }

    /**
     * CPU time used so far, in seconds: [0] the control plane's JVM, [1] its embedded PostgreSQL
     * (the postmaster on the home's data directory and its running backends and workers).
     */
    double[] cpuSeconds() {
        double jvm = cpu(process.toHandle());
        String dataDir = home.toString();
        double db = ProcessHandle.allProcesses()
                .filter(p ->
                        p.info().commandLine().map(c -> c.contains(dataDir)).orElse(false))
                .filter(p -> p.info().command().map(c -> c.endsWith("postgres")).orElse(false))
                .mapToDouble(p ->
                        cpu(p) + p.descendants().mapToDouble(ControlPlane::cpu).sum())
                .sum();
        return new double[] {jvm, db};
    }

    private static double cpu(ProcessHandle p) {
        return p.info().totalCpuDuration().map(d -> d.toNanos() / 1e9).orElse(0.0);
    }

    static Path tempHome() throws IOException {
        return Files.createTempDirectory("kvreuse-bench-");
    }
}
