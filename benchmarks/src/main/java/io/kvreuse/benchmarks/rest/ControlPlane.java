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
        // extra options for the control plane's JVM only (space-separated), e.g. an AOT cache
        String jvmArgs = System.getProperty("kvreuse.bench.cp.jvmArgs", "").strip();
        if (!jvmArgs.isEmpty()) {
            command.addAll(List.of(jvmArgs.split("\\s+")));
        }
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

    /**
     * Stops the control plane and deletes its home (the embedded database is some 200 MB after an
     * ingestion run); {@code -Dkvreuse.bench.keep=true} keeps it, with {@code control-plane.log}.
     */
    @Override
    public void close() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor();
        }
        if (Boolean.getBoolean("kvreuse.bench.keep")) {
            System.out.println("control plane home kept: " + home);
        } else {
            deleteHome();
        }
    }

    private void deleteHome() {
        // the embedded PostgreSQL stops with the control plane; give its last files a moment
        for (int attempt = 0; attempt < 10; attempt++) {
            try (var paths = Files.walk(home)) {
                paths.sorted(java.util.Comparator.reverseOrder())
                        .forEach(p -> p.toFile().delete());
            } catch (IOException | java.io.UncheckedIOException racing) {
                // a file went away while walking: try again
            }
            if (!Files.exists(home)) {
                return;
            }
            try {
                Thread.sleep(500);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
        System.err.println("could not delete " + home);
    }

    /**
     * CPU time used so far, in seconds: [0] the control plane's JVM, [1] its embedded PostgreSQL (the
     * postmaster on the home's data directory, its running backends and workers, and the children it
     * has already reaped: autovacuum workers come and go within a phase), [2] the JVM's JIT compiler
     * threads (part of [0]: a server that is still compiling is not yet warm).
     */
    double[] cpuSeconds() {
        double jvm = cpu(process.toHandle());
        String dataDir = home.toString();
        double db = ProcessHandle.allProcesses()
                .filter(p ->
                        p.info().commandLine().map(c -> c.contains(dataDir)).orElse(false))
                .filter(p -> p.info().command().map(c -> c.endsWith("postgres")).orElse(false))
                .mapToDouble(p -> cpu(p)
                        + reapedChildren(p.pid())
                        + p.descendants().mapToDouble(ControlPlane::cpu).sum())
                .sum();
        return new double[] {jvm, db, compilerThreads(process.pid())};
    }

    /** CPU seconds a process has used so far (0 where the platform does not tell). */
    static double cpu(ProcessHandle p) {
        return p.info().totalCpuDuration().map(d -> d.toNanos() / 1e9).orElse(0.0);
    }

    /** Clock ticks of a Linux stat line's fields from {@code from} (1-based, after the command). */
    private static long ticks(String stat, int... fields) {
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        long sum = 0;
        for (int field : fields) {
            sum += Long.parseLong(f[field - 3]);
        }
        return sum;
    }

    /** CPU of the children a process has waited for (cutime + cstime), in seconds; 0 off Linux. */
    private static double reapedChildren(long pid) {
        try {
            return ticks(Files.readString(Path.of("/proc", Long.toString(pid), "stat")), 16, 17) / TICKS;
        } catch (IOException | RuntimeException notLinux) {
            return 0;
        }
    }

    /** CPU of a JVM's C1 and C2 compiler threads, in seconds; 0 off Linux. */
    private static double compilerThreads(long pid) {
        Path tasks = Path.of("/proc", Long.toString(pid), "task");
        try (var threads = Files.list(tasks)) {
            return threads.mapToLong(t -> {
                                try {
                                    String stat = Files.readString(t.resolve("stat"));
                                    return stat.contains("(C1 CompilerThre") || stat.contains("(C2 CompilerThre")
                                            ? ticks(stat, 14, 15)
                                            : 0;
                                } catch (IOException | RuntimeException gone) {
                                    return 0;
                                }
                            })
                            .sum()
                    / TICKS;
        } catch (IOException | RuntimeException notLinux) {
            return 0;
        }
    }

    /** USER_HZ: 100 on every Linux this runs on. */
    private static final double TICKS = 100.0;

    static Path tempHome() throws IOException {
        return Files.createTempDirectory("kvreuse-bench-");
    }
}
