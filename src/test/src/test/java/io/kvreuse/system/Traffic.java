package io.kvreuse.system;

import io.kvreuse.sim.SimEngineException;
import io.kvreuse.testkit.KvReuseClient;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import tools.jackson.databind.JsonNode;

/**
 * Routers driving a {@link SystemFleet}: each asks for donors at a steady pace, for the next turn of
 * a conversation some donor retains, on its preferred replica; when that replica does not answer it
 * fails over to the other (and tries its own again after a while). Every hint goes to the target
 * prefill engine, which runs the whole lease lifecycle with the donor and the agent. Every answer is
 * kept as a {@link Sample}.
 */
final class Traffic implements AutoCloseable {

    /** One router call: when (nanoTime), which replica, what came back ({@code status} 0: no answer). */
    record Sample(long start, long end, int replica, int status, String decision, String reason, String error) {
        boolean answered() {
            return status == 200;
        }

        long micros() {
            return (end - start) / 1_000;
        }
    }

    static final Duration FAIL_BACK_AFTER = Duration.ofSeconds(3);

    final int deadlineMs;
    final Duration httpTimeout;
    private final SystemFleet fleet;
    private final List<String> urls;
    private final HttpClient client =
            HttpClient.newBuilder().connectTimeout(Duration.ofMillis(500)).build();
    private final ConcurrentLinkedQueue<Sample> samples = new ConcurrentLinkedQueue<>();
    private final Set<String> hinted = ConcurrentHashMap.newKeySet();
    private final AtomicLong duplicateLeases = new AtomicLong();
    private final AtomicLong fetchFailures = new AtomicLong();
    private final List<Thread> routers = new ArrayList<>();
    private volatile boolean running = true;

    private Traffic(SystemFleet fleet, int deadlineMs) {
        this.fleet = fleet;
        this.deadlineMs = deadlineMs;
        this.httpTimeout = Duration.ofMillis(deadlineMs + 2_000L);
        this.urls = fleet.replicas.stream().map(KvReuseProcess::baseUrl).toList();
    }

    /** Starts the fleet's routers ({@link SystemFleet.Size#routers()}), router {@code i} preferring replica {@code i % 2}. */
    static Traffic start(SystemFleet fleet, int deadlineMs) {
        Traffic t = new Traffic(fleet, deadlineMs);
        for (int i = 0; i < fleet.size.routers(); i++) {
            int router = i;
            t.routers.add(Thread.ofPlatform().daemon().name("router-" + i).start(() -> t.route(router)));
        }
        return t;
    }

    private void route(int router) {
        Random random = new Random(router);
        int preferred = router % urls.size();
        int current = preferred;
        long onOther = 0;
        long pauseNanos = (long) (1e9 / fleet.size.selectionsPerRouterPerSecond());
        while (running) {
            long start = System.nanoTime();
            if (current != preferred && start - onOther > FAIL_BACK_AFTER.toNanos()) {
                current = preferred;
            }
            SystemFleet.Conversation c = fleet.anyConversation();
            Sample s = select(current, c, random);
            samples.add(s);
            if (!s.answered()) {
                current = (current + 1) % urls.size();
                onOther = System.nanoTime();
            }
            long left = pauseNanos - (System.nanoTime() - start);
            if (left > 0) {
                sleep(left);
            }
        }
    }

    private Sample select(int replica, SystemFleet.Conversation c, Random random) {
        List<String> hashes = new ArrayList<>();
        for (long h : c.chain()) {
            hashes.add(Long.toUnsignedString(h));
        }
        // the new turn: blocks nobody holds yet
        for (int i = 0; i < 2; i++) {
            hashes.add(Long.toUnsignedString(random.nextLong()));
        }
        Map<String, Object> body = Map.of(
                "requestId",
                "req-" + UUID.randomUUID(),
                "targetIncarnationId",
                c.target().id(),
                "seqHashes",
                hashes,
                "localPrefixBlocks",
                0,
                "deadlineMs",
                deadlineMs);
        long start = System.nanoTime();
        try {
            HttpResponse<String> r = client.send(
                    HttpRequest.newBuilder(URI.create(urls.get(replica) + "/api/v1/donor-selections"))
                            .header("Authorization", "Bearer " + fleet.router)
                            .header("Content-Type", "application/json")
                            .timeout(httpTimeout)
                            .POST(HttpRequest.BodyPublishers.ofString(KvReuseClient.JSON.writeValueAsString(body)))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            long end = System.nanoTime();
            if (r.statusCode() != 200) {
                return new Sample(start, end, replica, r.statusCode(), "", "", r.body());
            }
            JsonNode answer = KvReuseClient.JSON.readTree(r.body());
            String decision = answer.path("decision").asString();
            if (decision.equals("HINT")) {
                hand(c, answer);
            }
            return new Sample(
                    start, end, replica, 200, decision, answer.path("reason").asString(""), "");
        } catch (IOException e) {
            return new Sample(start, System.nanoTime(), replica, 0, "", "", e.toString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Sample(start, System.nanoTime(), replica, 0, "", "", "interrupted");
        }
    }

    /** The router passes the hint on to its target, which runs the lease. */
    private void hand(SystemFleet.Conversation c, JsonNode answer) {
        if (!hinted.add(answer.path("leaseId").asString())) {
            duplicateLeases.incrementAndGet();
        }
        try {
            c.target().fetch(answer.get("hint"));
        } catch (SimEngineException e) {
            // the target could not report its destination (replica or store away): the lease expires unpinned
            fetchFailures.incrementAndGet();
        }
    }

    /** Stops the routers and waits for their last calls. */
    @Override
    public void close() throws InterruptedException {
        running = false;
        for (Thread t : routers) {
            t.join(httpTimeout.toMillis() + 5_000);
        }
    }

    List<Sample> samples() {
        return samples.stream().sorted(Comparator.comparingLong(Sample::start)).toList();
    }

    /** Samples that started in [from, to) (nanoTime). */
    List<Sample> between(long from, long to) {
        return samples().stream()
                .filter(s -> s.start() >= from && s.start() < to)
                .toList();
    }

    Set<String> hintedLeases() {
        return Set.copyOf(hinted);
    }

    long duplicateLeases() {
        return duplicateLeases.get();
    }

    long fetchFailures() {
        return fetchFailures.get();
    }

    /** Answers counted by outcome: {@code HINT}, {@code NO_HINT:<reason>}, {@code HTTP <status>}, {@code NO_ANSWER}. */
    static Map<String, Long> outcomes(List<Sample> samples) {
        Map<String, Long> counts = new TreeMap<>();
        for (Sample s : samples) {
            String key = s.status() == 0
                    ? "NO_ANSWER"
                    : s.status() != 200
                            ? "HTTP " + s.status()
                            : s.decision().equals("HINT") ? "HINT" : "NO_HINT:" + s.reason();
            counts.merge(key, 1L, Long::sum);
        }
        return counts;
    }

    /**
     * The longest time routers as a whole went without an answer, over [from, to): the gap between
     * consecutive answered calls' completions (and the window's edges).
     */
    static long longestGapMillis(List<Sample> samples, long from, long to) {
        List<Long> ends = samples.stream()
                .filter(Sample::answered)
                .map(Sample::end)
                .filter(e -> e >= from && e < to)
                .sorted()
                .toList();
        long previous = from;
        long gap = 0;
        for (long e : ends) {
            gap = Math.max(gap, e - previous);
            previous = e;
        }
        gap = Math.max(gap, to - previous);
        return gap / 1_000_000;
    }

    /** The given percentile (0-100) of the samples' latency, in milliseconds. */
    static double percentileMillis(List<Sample> samples, double percentile) {
        long[] micros = samples.stream().mapToLong(Sample::micros).sorted().toArray();
        if (micros.length == 0) {
            return Double.NaN;
        }
        int i = (int) Math.ceil(percentile / 100.0 * micros.length) - 1;
        return micros[Math.max(0, Math.min(micros.length - 1, i))] / 1000.0;
    }

    private static void sleep(long nanos) {
        try {
            Thread.sleep(Duration.ofNanos(nanos));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
