package io.kvreuse.system;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.testkit.KvReuseClient;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.ConnectException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The one-command demo ({@code demo/run.sh}) exactly as a newcomer runs it: the script starts the
 * built jar as control plane and agent, simulated engines serve the serving smoke with reuse off
 * and on, and the report must come out as designed (OFF computes 657 prompt tokens; ON computes 81
 * and reuses 576). While it runs, the dashboard URL and operator token it printed must sign in.
 *
 * <p>Full size ({@code -Dkvreuse.system.size=full}) also runs it with {@code --keep-running}: the
 * background conversations go on for a minute, then a SIGTERM (as Ctrl-C) stops everything.
 */
class DemoSystemTests {

    private static final boolean FULL = "full".equals(System.getProperty("kvreuse.system.size"));
    private static final Duration DEMO_LIMIT = Duration.ofMinutes(6);
    private static final Pattern DASHBOARD = Pattern.compile("Dashboard:\\s+(http://\\S+)/login");
    private static final Pattern TOKEN = Pattern.compile("Operator token:\\s+(\\S+)");
    private static final Pattern DATA = Pattern.compile("data in (\\S+)\\)");
    private static final Pattern TOTALS =
            Pattern.compile("totals (OFF|ON) *: requests (\\d+), prompt tokens (\\d+), computed (\\d+), reused (\\d+),"
                    + " bytes moved (\\d+), deliveries (\\d+), partial transfers (\\d+), failures (\\d+)");
    private static final Pattern ROW = Pattern.compile("^(OFF|ON)\\s+(\\S+)\\s+(\\d+)\\s+(\\d+)\\s+(\\d+)\\s+.*$");
    private static final Pattern AGENT_BYTES =
            Pattern.compile("kvreuse_agent_transfer_bytes_total\\): (\\d+) bytes moved");
    private static final Pattern BACKGROUND = Pattern.compile(
            "conversation-\\d+: \\d+ turns, prompt tokens \\d+, computed \\d+, reused (\\d+), failures (\\d+)");

    private final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private Process demo;

    @AfterEach
    void stopDemo() throws InterruptedException {
        if (demo != null && demo.isAlive()) {
            demo.destroy(); // the demo's shutdown hook stops the processes it started
            if (!demo.waitFor(90, TimeUnit.SECONDS)) {
                demo.descendants().forEach(ProcessHandle::destroyForcibly);
                demo.destroyForcibly();
            }
        }
    }

    @Test
    void demoReportsTheServingSmokeOffAndOnAndItsDashboardTokenSignsIn() throws Exception {
        long start = System.nanoTime();
        Output output = launch();

        String dashboard = output.await(DASHBOARD).group(1);
        String token = output.await(TOKEN).group(1);
        double secondsToDashboard = (System.nanoTime() - start) / 1e9;
        signInAndCallTheApi(dashboard, token);

        assertThat(demo.waitFor(DEMO_LIMIT.toSeconds(), TimeUnit.SECONDS))
                .as("the demo ends by itself")
                .isTrue();
        double seconds = (System.nanoTime() - start) / 1e9;
        output.drained();
        List<String> lines = output.lines();
        assertThat(demo.exitValue()).as(String.join("\n", lines)).isZero();

        Map<String, long[]> totals = totals(lines);
        long[] off = totals.get("OFF");
        long[] on = totals.get("ON");
        // requests, prompt, computed, reused, bytes, deliveries, partial, failures
        assertThat(off).as("OFF totals").containsExactly(3, 657, 657, 0, 0, 0, 0, 0);
        assertThat(on[0]).isEqualTo(3);
        assertThat(on[1]).as("ON prompt tokens").isEqualTo(657);
        assertThat(on[2]).as("ON computed").isEqualTo(81);
        assertThat(on[3]).as("ON reused").isEqualTo(576);
        assertThat(on[5]).as("deliveries").isGreaterThan(0);
        assertThat(on[6]).as("partial transfers").isZero();
        assertThat(on[7]).as("failures").isZero();
        assertThat(on[4])
                .as("bytes moved into the prefill engine and verified there")
                .isPositive();
        long agentBytes = Long.parseLong(output.await(AGENT_BYTES).group(1));
        assertThat(agentBytes).as("the agent's own count of bytes moved").isEqualTo(on[4]);

        assertThat(rows(lines, "ON"))
                .as("ON per request: prompt, computed, reused")
                .containsExactly(List.of(20L, 20L, 0L), List.of(212L, 20L, 192L), List.of(425L, 41L, 384L));
        assertThat(rows(lines, "OFF"))
                .containsExactly(List.of(20L, 20L, 0L), List.of(212L, 212L, 0L), List.of(425L, 425L, 0L));
        assertThat(lines)
                .as("an engine crash goes SUSPECT, then LOST, and the operator's cleanup reclaims it")
                .anyMatch(l -> l.contains("decode-a is SUSPECT"))
                .anyMatch(l -> l.contains("decode-a is LOST"))
                .anyMatch(l -> l.contains("decode-a LOST -> RECLAIMED") && l.contains("banks dropped 1"));

        assertStoppedCleanly(dashboard, output);
        results(secondsToDashboard, seconds, lines);
    }

    @Test
    void keepRunningServesUntilStoppedAndThenStopsEverything() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(FULL, "full size only (-Dkvreuse.system.size=full)");
        Output output = launch("--keep-running");
        String dashboard = output.await(DASHBOARD).group(1);
        output.await(Pattern.compile("press Ctrl-C to stop"));
        Thread.sleep(60_000);
        List<Matcher> conversations = output.all(BACKGROUND);
        assertThat(conversations).as("background conversations in a minute").hasSizeGreaterThan(3);
        assertThat(conversations).allMatch(m -> m.group(2).equals("0"));
        assertThat(conversations).anyMatch(m -> Long.parseLong(m.group(1)) > 0);
        signInAndCallTheApi(dashboard, output.await(TOKEN).group(1));

        // what Ctrl-C does (SIGINT) without depending on how this JVM was started: SIGTERM runs the same hook
        demo.destroy();
        assertThat(demo.waitFor(2, TimeUnit.MINUTES)).as("stops when told to").isTrue();
        output.drained();
        assertStoppedCleanly(dashboard, output);
    }

    /** Starts {@code demo/run.sh} from the repository root on any free port, reading its output as it comes. */
    private Output launch(String... extra) throws IOException {
        Path jar = KvReuseProcess.jar();
        Path root = jar.getParent().getParent().getParent();
        Path javaHome = Path.of(System.getProperty("kvreuse.java", "java"))
                .toAbsolutePath()
                .getParent()
                .getParent();
        List<String> cmd =
                new ArrayList<>(List.of("bash", root.resolve("demo/run.sh").toString(), "--port", "0"));
        cmd.addAll(List.of(extra));
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(root.toFile()).redirectErrorStream(true);
        pb.environment().keySet().removeIf(k -> k.startsWith("KVREUSE_") || k.startsWith("SPRING_"));
        pb.environment().put("JAVA_HOME", javaHome.toString());
        pb.environment().put("KVREUSE_JAR", jar.toString());
        demo = pb.start();
        return new Output(demo);
    }

    /** The printed token signs in to the dashboard at the printed URL, and calls the API as an operator. */
    private void signInAndCallTheApi(String baseUrl, String token) throws Exception {
        assertThat(signIn(baseUrl, "not-" + token))
                .as("a wrong token is refused")
                .startsWith("/login?error");
        assertThat(signIn(baseUrl, token)).as("the printed token signs in").isEqualTo("/admin");
        var settings = new KvReuseClient(baseUrl).get("/api/v1/settings/reuse", token);
        assertThat(settings.status()).as(settings.toString()).isEqualTo(200);
    }

    /** Posts the sign-in form as a browser would; returns where it redirects (after checking /admin opens). */
    private String signIn(String baseUrl, String token) throws Exception {
        HttpResponse<String> page = http.send(
                HttpRequest.newBuilder(URI.create(baseUrl + "/login")).GET().build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(page.statusCode()).isEqualTo(200);
        String cookie = sessionCookie(page).orElseThrow();
        Matcher csrf = Pattern.compile("name=\"_csrf\" value=\"([^\"]+)\"").matcher(page.body());
        assertThat(csrf.find()).as("a CSRF field on the sign-in page").isTrue();
        String form = "token=" + URLEncoder.encode(token, StandardCharsets.UTF_8) + "&_csrf="
                + URLEncoder.encode(csrf.group(1), StandardCharsets.UTF_8);
        HttpResponse<String> posted = http.send(
                HttpRequest.newBuilder(URI.create(baseUrl + "/login"))
                        .header("Content-Type", "application/x-www-form-urlencoded")
                        .header("Cookie", cookie)
                        .POST(HttpRequest.BodyPublishers.ofString(form))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(posted.statusCode()).as("sign-in answers with a redirect").isBetween(300, 399);
        String location = posted.headers().firstValue("Location").orElseThrow();
        if (location.equals("/admin")) {
            String session = sessionCookie(posted).orElse(cookie);
            HttpResponse<String> admin = http.send(
                    HttpRequest.newBuilder(URI.create(baseUrl + "/admin"))
                            .header("Cookie", session)
                            .header("Accept", "text/html")
                            .GET()
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(admin.statusCode())
                    .as("the dashboard opens in the signed-in session")
                    .isEqualTo(200);
            assertThat(admin.body()).contains("<html");
        }
        return location;
    }

    private static java.util.Optional<String> sessionCookie(HttpResponse<?> r) {
        return r.headers().allValues("Set-Cookie").stream()
                .filter(c -> c.startsWith("KVREUSE_SESSION="))
                .map(c -> c.substring(0, c.indexOf(';') < 0 ? c.length() : c.indexOf(';')))
                .findFirst();
    }

    /** After the demo: nothing answers on the dashboard's port, and its temporary data directory is gone. */
    private void assertStoppedCleanly(String dashboard, Output output) throws Exception {
        Path data = Path.of(output.await(DATA).group(1));
        assertThat(data).as("temporary data directory removed").doesNotExist();
        try {
            http.send(
                    HttpRequest.newBuilder(URI.create(dashboard + "/actuator/health"))
                            .timeout(Duration.ofSeconds(5))
                            .build(),
                    HttpResponse.BodyHandlers.discarding());
            throw new AssertionError("the control plane still answers at " + dashboard);
        } catch (ConnectException expected) {
            // stopped
        }
    }

    private static Map<String, long[]> totals(List<String> lines) {
        Map<String, long[]> totals = new java.util.HashMap<>();
        for (String line : lines) {
            Matcher m = TOTALS.matcher(line);
            if (m.find()) {
                long[] values = new long[8];
                for (int i = 0; i < 8; i++) {
                    values[i] = Long.parseLong(m.group(i + 2));
                }
                totals.put(m.group(1), values);
            }
        }
        assertThat(totals).as(String.join("\n", lines)).containsKeys("OFF", "ON");
        return totals;
    }

    private static List<List<Long>> rows(List<String> lines, String run) {
        List<List<Long>> rows = new ArrayList<>();
        for (String line : lines) {
            Matcher m = ROW.matcher(line);
            if (m.matches() && m.group(1).equals(run)) {
                rows.add(List.of(Long.parseLong(m.group(3)), Long.parseLong(m.group(4)), Long.parseLong(m.group(5))));
            }
        }
        return rows;
    }

    private static void results(double secondsToDashboard, double seconds, List<String> lines) throws IOException {
        Path file = Path.of("target", "system-results", "demo.txt");
        Files.createDirectories(file.getParent());
        List<String> out = new ArrayList<>();
        out.add("demo/run.sh at CI size, " + java.time.Instant.now() + ", "
                + Runtime.getRuntime().availableProcessors() + " cores");
        out.add(String.format(
                "dashboard URL and token printed after %.1f s; demo ended after %.1f s", secondsToDashboard, seconds));
        lines.stream()
                .filter(l -> l.startsWith("[") || l.startsWith("totals") || l.startsWith("with reuse"))
                .forEach(out::add);
        Files.write(file, out);
    }

    /** The demo's output, read line by line on a thread as it is printed. */
    private static final class Output {

        private final List<String> lines = Collections.synchronizedList(new ArrayList<>());
        private final CompletableFuture<Void> done;

        Output(Process process) {
            done = CompletableFuture.runAsync(() -> {
                try (BufferedReader r =
                        new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                    for (String line = r.readLine(); line != null; line = r.readLine()) {
                        lines.add(line);
                    }
                } catch (IOException ended) {
                    // the process is gone
                }
            });
        }

        List<String> lines() {
            synchronized (lines) {
                return List.copyOf(lines);
            }
        }

        /** Waits for the first line matching {@code pattern} (the demo's own steps are bounded; so is this). */
        Matcher await(Pattern pattern) throws InterruptedException {
            long deadline = System.nanoTime() + DEMO_LIMIT.toNanos();
            while (System.nanoTime() < deadline) {
                for (String line : lines()) {
                    Matcher m = pattern.matcher(line);
                    if (m.find()) {
                        return m;
                    }
                }
                if (done.isDone()) {
                    break;
                }
                Thread.sleep(100);
            }
            throw new AssertionError("no line matching " + pattern + " in:\n" + String.join("\n", lines()));
        }

        List<Matcher> all(Pattern pattern) {
            List<Matcher> found = new ArrayList<>();
            for (String line : lines()) {
                Matcher m = pattern.matcher(line);
                if (m.find()) {
                    found.add(m);
                }
            }
            return found;
        }

        void drained() throws Exception {
            done.get(30, TimeUnit.SECONDS);
        }
    }
}
