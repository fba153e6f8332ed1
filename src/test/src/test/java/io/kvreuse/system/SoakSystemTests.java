package io.kvreuse.system;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Churn for a fixed time — engines registering and exiting, banks created, filled and reset, full
 * lease lifecycles — while the control plane's heap after a forced GC and the database's table
 * sizes are sampled. Least-squares slopes go to {@code target/soak-results.md}.
 *
 * <p>CI size: {@code PT60S}. Full size: {@code -Dkvreuse.system.soak=PT30M}. The heap bound is
 * deliberately generous (see {@link #HEAP_SLOPE_BOUND_MB_PER_MIN}): it catches a leak of the size
 * that would exhaust the replica's 512 MiB heap within hours, not allocator noise.
 */
class SoakSystemTests {

    /**
     * Largest heap-after-GC slope accepted, in MiB per minute. Measured on the shared 2-core machine:
     * between -0.8 and +0.3 MiB/min, with single samples 1-2 MiB apart (BENCHMARKS.md). At the ~400
     * leases/min this churn reaches, a leak of 10 KiB per lease (a lease's view with its hashes and
     * holds kept by some map, or a bank's index entries never dropped) exceeds the bound and would
     * fill the 512 MiB heap within two hours; smaller leaks show in the full-size run's slope, which
     * the results file reports, not in this assertion.
     */
    static final double HEAP_SLOPE_BOUND_MB_PER_MIN = 4.0;

    /** Tables whose size is sampled: the lease path, the fleet, inventory and the trail. */
    static final List<String> TABLES = List.of(
            "lease",
            "lease_source_pin",
            "lease_destination",
            "destination_slot_run",
            "engine_command",
            "transfer_order",
            "transfer_part",
            "engine_incarnation",
            "incarnation_rank",
            "retained_bank",
            "bank_part",
            "bank_page",
            "inventory_change",
            "audit_event",
            "idempotency_key");

    @TempDir
    Path home;

    record Sample(double minutes, double heapMb, long leases, Map<String, Long> tableBytes, Map<String, Long> live) {
        long liveRows() {
            return live.values().stream().mapToLong(Long::longValue).sum();
        }
    }

    /**
     * What must not pile up between generations, each as one count: every lease of a finished
     * generation is terminal, nothing is held, every command was answered, every engine exited.
     */
    static final Map<String, String> LIVE = Map.of(
            "unfinished leases", "SELECT count(*) FROM lease WHERE state NOT IN ('RELEASED', 'EXPIRED')",
            "held pins", "SELECT count(*) FROM lease_source_pin WHERE state NOT IN ('RELEASED', 'REFUSED')",
            "held destinations", "SELECT count(*) FROM lease_destination WHERE state <> 'RELEASED'",
            "unanswered commands", "SELECT count(*) FROM engine_command WHERE acked_at IS NULL",
            "engines not exited",
                    "SELECT count(*) FROM engine_incarnation WHERE host_id LIKE 'soak-%' AND state NOT IN ('EXITED', 'RECLAIMED')",
            "blocks of banks whose owner exited", """
                    SELECT count(*) FROM bank_block b JOIN retained_bank k USING (bank_id)
                    JOIN engine_incarnation i ON i.incarnation_id = k.incarnation_id WHERE i.state = 'EXITED'""");

    @Test
    void churnOfEnginesBanksAndLeasesKeepsHeapAfterGcFlatAndLiveRowsBounded() throws Exception {
        Duration soak = Duration.parse(System.getProperty("kvreuse.system.soak", "PT60S"));
        Duration every = Duration.ofSeconds(Math.clamp(soak.toSeconds() / 8, 10, 60));
        try (PgControlPlane cp = PgControlPlane.start(home, Map.of())) {
            cp.reuse(10_000, 10_000, 60_000);
            SoakDriver driver = new SoakDriver(cp);
            // warm-up: the JIT, pools and caches settle before the first sample
            long warm = System.nanoTime() + every.toNanos();
            while (System.nanoTime() < warm) {
                driver.generation();
            }
            List<Sample> samples = new ArrayList<>();
            long start = System.nanoTime();
            long end = start + soak.toNanos();
            long nextSample = start;
            while (true) {
                long now = System.nanoTime();
                if (now >= nextSample) {
                    samples.add(sample(cp, driver, (now - start) / 60e9));
                    nextSample += every.toNanos();
                }
                if (now >= end) {
                    break;
                }
                driver.generation();
            }
            samples.add(sample(cp, driver, (System.nanoTime() - start) / 60e9));

            double heapSlope = slope(samples, Sample::heapMb);
            double tableSlope = slope(
                    samples,
                    s -> s.tableBytes().values().stream()
                                    .mapToLong(Long::longValue)
                                    .sum()
                            / 1048576.0);
            write(soak, samples, heapSlope, tableSlope, driver);

            assertThat(driver.serverErrors.get())
                    .as("5xx answers during the soak")
                    .isZero();
            assertThat(samples)
                    .allSatisfy(s -> assertThat(s.liveRows())
                            .as("rows still live between generations (unfinished leases, held pins and allocations, "
                                    + "unacknowledged commands, incarnations not exited, blocks of live banks)")
                            .isLessThanOrEqualTo(0));
            assertThat(heapSlope)
                    .as("heap after GC slope, MiB/min (samples in target/soak-results.md)")
                    .isLessThan(HEAP_SLOPE_BOUND_MB_PER_MIN);
            try (Connection c = cp.jdbc()) {
                Invariants.assertHold(c);
            }
        }
    }

    private static Sample sample(PgControlPlane cp, SoakDriver driver, double minutes) throws Exception {
        jcmd(cp.process.pid(), "GC.run");
        double heap = 0;
        for (String line :
                cp.api.get("/actuator/prometheus", cp.operator).body().split("\n")) {
            if (line.startsWith("jvm_memory_used_bytes{") && line.contains("area=\"heap\"")) {
                heap += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        Map<String, Long> sizes = new LinkedHashMap<>();
        for (String table : TABLES) {
            sizes.put(table, cp.scalar("SELECT pg_total_relation_size(?::regclass)", table));
        }
        Map<String, Long> live = new LinkedHashMap<>();
        for (Map.Entry<String, String> q : LIVE.entrySet()) {
            live.put(q.getKey(), cp.scalar(q.getValue()));
        }
        return new Sample(minutes, heap / 1048576.0, driver.leases, sizes, live);
    }

    private static void jcmd(long pid, String command) throws Exception {
        Path java = Path.of(System.getProperty("kvreuse.java", "java"));
        Path jcmd = java.getParent() == null ? Path.of("jcmd") : java.resolveSibling("jcmd");
        Process p = new ProcessBuilder(jcmd.toString(), Long.toString(pid), command)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .start();
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("jcmd " + command).isTrue();
        assertThat(p.exitValue()).as("jcmd " + command + " exit status").isZero();
    }

    /** Least-squares slope of y over the samples' minutes. */
    static double slope(List<Sample> samples, java.util.function.ToDoubleFunction<Sample> y) {
        double n = samples.size();
        double sx = 0, sy = 0, sxx = 0, sxy = 0;
        for (Sample s : samples) {
            double x = s.minutes();
            double v = y.applyAsDouble(s);
            sx += x;
            sy += v;
            sxx += x * x;
            sxy += x * v;
        }
        return (n * sxy - sx * sy) / (n * sxx - sx * sx);
    }

    private static void write(Duration soak, List<Sample> samples, double heapSlope, double tableSlope, SoakDriver d)
            throws Exception {
        double minutes = samples.getLast().minutes();
        long leases = samples.getLast().leases() - samples.getFirst().leases();
        StringBuilder out = new StringBuilder();
        out.append("# Soak results\n\n");
        out.append("run ").append(Instant.now()).append(", soak ").append(soak);
        out.append(String.format(
                ", %.2f min sampled; %d generations, %d leases in all, %d in the sampled window (%.0f/min), %d requests, %d 5xx%n%n",
                minutes, d.generations, d.leases, leases, leases / minutes, d.requests.get(), d.serverErrors.get()));
        out.append(String.format(
                "heap after GC slope: %.3f MiB/min = %.0f bytes per lease (bound %.1f MiB/min)%n",
                heapSlope, heapSlope * 1048576 / (leases / minutes), HEAP_SLOPE_BOUND_MB_PER_MIN));
        out.append(String.format(
                "tables total slope: %.3f MiB/min = %.0f bytes per lease%n%n",
                tableSlope, tableSlope * 1048576 / (leases / minutes)));
        out.append("| table | first (KiB) | last (KiB) | slope (KiB/min) | bytes per lease |\n|---|---|---|---|---|\n");
        for (String table : TABLES) {
            double s = slope(samples, x -> x.tableBytes().get(table) / 1024.0);
            out.append(String.format(
                    "| %s | %d | %d | %.1f | %.0f |%n",
                    table,
                    samples.getFirst().tableBytes().get(table) / 1024,
                    samples.getLast().tableBytes().get(table) / 1024,
                    s,
                    s * 1024 / (leases / minutes)));
        }
        out.append("\n| minute | heap after GC (MiB) | leases | live rows |\n|---|---|---|---|\n");
        for (Sample s : samples) {
            out.append(String.format("| %.2f | %.1f | %d | %s |%n", s.minutes(), s.heapMb(), s.leases(), s.live()));
        }
        Path target = Path.of(System.getProperty("basedir", "."), "target");
        Files.createDirectories(target);
        Files.writeString(target.resolve("soak-results.md"), out.toString());
        System.out.println(out);
    }
}
