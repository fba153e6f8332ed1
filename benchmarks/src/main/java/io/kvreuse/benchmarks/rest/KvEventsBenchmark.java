package io.kvreuse.benchmarks.rest;

import io.kvreuse.agent.kvevents.HttpInventoryFeed;
import io.kvreuse.agent.kvevents.KvEventBridge;
import io.kvreuse.testkit.KvReuseClient;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.net.URI;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.UUID;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.locks.LockSupport;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * The node agent's KV event bridge (docs/kv-events.md) from real ZMQ publishers into the built
 * control plane's durable ingestion: (1) block events/s, publishers unpaced behind a window;
 * (2) publish→visible lag, sampled by a router polling donor selection for a fresh probe chain
 * while the streams carry a paced background load; (3) a loss-accounting run with withheld
 * (replayed) batches, lost sequences and publisher restarts.
 */
public final class KvEventsBenchmark {

    private static final int BLOCKS_PER_EVENT = 16;
    private static final int EVENTS_PER_BATCH = 4;
    private static final int BLOCKS_PER_BATCH = BLOCKS_PER_EVENT * EVENTS_PER_BATCH;
    private static final int PROBE_SLOTS = 128;
    private static final int PROBE_BLOCKS = 64;

    /**
     * The pause between two selection polls for a probe (-Dkvreuse.bench.lag.pollMicros, default
     * 1,000; 0: back to back, the shape of the runs before 2026-12-05 06:35Z). A router asks once per
     * request, not in a loop on one chain; back to back, the probe's own polls (130 a second, 17 a
     * probe) were requests to the control plane on the same two cores at the moment the probe's posts
     * were in flight, and at 50,000 events/s, where the machine is saturated, they lengthened the
     * posts' tail (one post p99 49–57 against 36–43 ms, three alternated pairs,
     * BENCHMARKS-kv-events.md). A millisecond between polls bounds what the pause adds to a lag to
     * one millisecond. At 5,000 events/s (2026-12-03) the two made no difference.
     */
    private static final long POLL_PAUSE_NANOS = Long.getLong("kvreuse.bench.lag.pollMicros", 1_000) * 1_000;

    /**
     * Seconds of the same load before the throughput and the lag phases, not counted
     * (-Dkvreuse.bench.warmup, default 90; 0: none): a freshly started control plane spends a
     * fifth of the machine in its JIT compilers for its first minute and more, and its figures then
     * are warm-up figures, not what a running control plane sustains (BENCHMARKS-kv-events.md,
     * 2026-12-05 03:13Z onwards: after 30 s the compilers still took 0.12 cores in the lag phase
     * and its slowest probes fell in its first seconds, after 90 s 0.01–0.03).
     */
    private static final int WARMUP_SECONDS = Integer.getInteger("kvreuse.bench.warmup", 90);

    private interface Phase {
        void run() throws Exception;
    }

    /** Runs a phase with its printed lines left out (a warm-up). */
    private static void quietly(Phase phase) throws Exception {
        java.io.PrintStream out = System.out;
        System.setOut(new java.io.PrintStream(java.io.OutputStream.nullOutputStream()));
        try {
            phase.run();
        } finally {
            System.setOut(out);
        }
    }

    private KvEventsBenchmark() {}

    static int blocksPerBatch() {
        return BLOCKS_PER_BATCH;
    }

    public static void main(String[] args) throws Exception {
        Path jar = Path.of(args.length > 0 ? args[0] : "app/target/kvreuse.jar");
        int[] lagRates = java.util.Arrays.stream((args.length > 1 ? args[1] : "50000").split(","))
                .mapToInt(Integer::parseInt)
                .toArray();
        int seconds = args.length > 2 ? Integer.parseInt(args[2]) : 20;
        int lossSeconds = args.length > 3 ? Integer.parseInt(args[3]) : 60;
        java.util.Set<String> phases =
                java.util.Set.of(System.getProperty("kvreuse.bench.phases", "bridge,throughput,lag,loss")
                        .split(","));
        if (phases.contains("bridge")) {
            // the agent's side alone first, while no control plane shares the machine
            System.out.println("== bridge alone: " + 8 + " streams, unpaced for " + seconds + " s");
            System.out.println(KvEventsBridgeBenchmark.run(8, seconds));
        }
        if (!phases.contains("throughput") && !phases.contains("lag") && !phases.contains("loss")) {
            return;
        }
        boolean accounted = true;
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        try (ControlPlane cp = ControlPlane.start(jar, ControlPlane.tempHome(), java)) {
            KvReuseClient http = new KvReuseClient(cp.baseUrl);
            RestBenchmark.Fleet fleet = RestBenchmark.Fleet.build(http, cp.operator);
            String host = "bench-host-0";
            String agent = http.as(cp.operator).mint("AGENT", "bench-agent", host);
            List<Stream> streams = new ArrayList<>();
            int capacity = 32 * 256;
            for (RestBenchmark.Fleet.Donor d : fleet.donorsByHost.getFirst()) {
                List<Map<String, Object>> ranks = new ArrayList<>();
                for (int r = 0; r < RestBenchmark.TP; r++) {
                    Stream s = new Stream(d, r, capacity);
                    streams.add(s);
                    ranks.add(Map.of("rank", r, "endpoint", s.endpoint, "replayEndpoint", s.replayEndpoint));
                }
                http.send(
                        "PUT",
                        "/api/v1/banks/" + d.bankId() + "/event-source",
                        d.token(),
                        Map.of("format", "VLLM_KV_EVENTS", "allBlocksCleared", "NATIVE_CACHE_CLEARED", "ranks", ranks),
                        200);
            }
            SimpleMeterRegistry registry = new SimpleMeterRegistry();
            ProbeTimedFeed feed = new ProbeTimedFeed(new HttpInventoryFeed(URI.create(cp.baseUrl), agent, host));
            try (KvEventBridge bridge =
                    new KvEventBridge(feed, registry, Duration.ofMillis(500), Duration.ofMillis(50))) {
                bridge.refresh();
                bridge.start();
                Thread.sleep(1000);
                if (WARMUP_SECONDS > 0 && phases.contains("throughput")) {
                    System.out.println("== warm-up (not counted): the throughput load for " + WARMUP_SECONDS + " s");
                    quietly(() -> throughput(streams, registry, WARMUP_SECONDS));
                }
                if (phases.contains("throughput")) {
                    double[] cpu0 = cp.cpuSeconds();
                    double self0 = ControlPlane.cpu(ProcessHandle.current());
                    Map<String, Double> ingested0 = ingestionCounters(http, cp.operator);
                    long t0 = System.nanoTime();
                    throughput(streams, registry, seconds);
                    double wall = (System.nanoTime() - t0) / 1e9;
                    double[] cpu1 = cp.cpuSeconds();
                    Map<String, Double> ingested1 = ingestionCounters(http, cp.operator);
                    double batches = ingested1.getOrDefault("applied", 0.0) - ingested0.getOrDefault("applied", 0.0);
                    double oneCall = ingested1.getOrDefault("oneCall", 0.0) - ingested0.getOrDefault("oneCall", 0.0);
                    double blocks = ingested1.getOrDefault("stored", 0.0) - ingested0.getOrDefault("stored", 0.0);
                    double mapLoads = ingested1.getOrDefault("mapLoads", 0.0) - ingested0.getOrDefault("mapLoads", 0.0);
                    double stale = ingested1.getOrDefault("stale", 0.0) - ingested0.getOrDefault("stale", 0.0);
                    System.out.printf(
                            "throughput: cores busy: control plane %.2f (its JIT compilers %.2f), PostgreSQL %.2f,"
                                    + " this JVM (publishers, bridge) %.2f; %.0f applied batches, %.0f of them in one call,"
                                    + " %.0f blocks stored a batch; CPU per 1,024 stored blocks: control plane %.1f ms,"
                                    + " PostgreSQL %.1f ms; rank maps: %.0f one-call writes planned again, %.0f bank"
                                    + " reads%n",
                            (cpu1[0] - cpu0[0]) / wall,
                            (cpu1[2] - cpu0[2]) / wall,
                            (cpu1[1] - cpu0[1]) / wall,
                            (ControlPlane.cpu(ProcessHandle.current()) - self0) / wall,
                            batches,
                            oneCall,
                            batches == 0 ? 0 : blocks / batches,
                            blocks == 0 ? 0 : (cpu1[0] - cpu0[0]) * 1000 * 1024 / blocks,
                            blocks == 0 ? 0 : (cpu1[1] - cpu0[1]) * 1000 * 1024 / blocks,
                            stale,
                            mapLoads);
                }
                if (WARMUP_SECONDS > 0 && phases.contains("lag")) {
                    drain(registry);
                    System.out.println("== warm-up (not counted): the lag phase at " + lagRates[0]
                            + " block events/s for " + WARMUP_SECONDS + " s");
                    quietly(() -> lag(http, fleet, streams, registry, feed, lagRates[0], WARMUP_SECONDS));
                }
                if (phases.contains("lag")) {
                    for (int rate : lagRates) {
                        drain(registry);
                        double[] cpu0 = cp.cpuSeconds();
                        double self0 = ControlPlane.cpu(ProcessHandle.current());
                        ServerHistogram selections0 = ServerHistogram.read(http, cp.operator);
                        Map<String, Double> ingested0 = ingestionCounters(http, cp.operator);
                        long t0 = System.nanoTime();
                        lag(http, fleet, streams, registry, feed, rate, seconds);
                        double wall = (System.nanoTime() - t0) / 1e9;
                        double[] cpu1 = cp.cpuSeconds();
                        Map<String, Double> ingested1 = ingestionCounters(http, cp.operator);
                        double batches =
                                ingested1.getOrDefault("applied", 0.0) - ingested0.getOrDefault("applied", 0.0);
                        double blocks = ingested1.getOrDefault("stored", 0.0) - ingested0.getOrDefault("stored", 0.0);
                        System.out.printf(
                                "lag: cores busy during the phase: control plane %.2f (its JIT compilers %.2f),"
                                        + " PostgreSQL %.2f, this JVM (publishers, bridge, router) %.2f; %.0f applied"
                                        + " batches a second, %.0f blocks stored a batch, CPU per batch: control plane"
                                        + " %.2f ms, PostgreSQL %.2f ms%n",
                                (cpu1[0] - cpu0[0]) / wall,
                                (cpu1[2] - cpu0[2]) / wall,
                                (cpu1[1] - cpu0[1]) / wall,
                                (ControlPlane.cpu(ProcessHandle.current()) - self0) / wall,
                                batches / wall,
                                batches == 0 ? 0 : blocks / batches,
                                batches == 0 ? 0 : (cpu1[0] - cpu0[0]) * 1000 / batches,
                                batches == 0 ? 0 : (cpu1[1] - cpu0[1]) * 1000 / batches);
                        ServerHistogram selections =
                                ServerHistogram.read(http, cp.operator).minus(selections0);
                        System.out.printf(
                                "lag: server-side selection time (kvreuse_selection_latency) over %d polls: p50 ≤ %.1f ms,"
                                        + " p99 ≤ %.1f ms%n",
                                selections.count(), selections.percentileMs(50), selections.percentileMs(99));
                    }
                }
                if (phases.contains("loss")) {
                    drain(registry);
                    accounted = loss(http, streams, registry, lossSeconds);
                }
            } finally {
                streams.forEach(Stream::close);
                ENGINES.close();
            }
        }
        if (!accounted) {
            System.exit(3);
        }
    }

    private static final java.util.regex.Pattern INGESTION_COUNTER = java.util.regex.Pattern.compile(
            "^kvreuse_inventory_(batches_one_call_total(?:\\{[^}]*})?|batches_total\\{[^}]*outcome=\"applied\"[^}]*}"
                    + "|blocks_total\\{[^}]*kind=\"stored\"[^}]*}|rank_maps_loads_total(?:\\{[^}]*})?"
                    + "|rank_maps_stale_total(?:\\{[^}]*})?)\\s+([0-9.eE+]+)$",
            java.util.regex.Pattern.MULTILINE);

    /** The control plane's ingestion counters: applied batches, those in one call, stored blocks. */
    private static Map<String, Double> ingestionCounters(KvReuseClient http, String token) throws Exception {
        String body = http.sendAsync(http.request("GET", "/actuator/prometheus", token, null))
                .get()
                .body();
        Map<String, Double> counters = new java.util.HashMap<>();
        java.util.regex.Matcher m = INGESTION_COUNTER.matcher(body);
        while (m.find()) {
            String g = m.group(1);
            String key = g.startsWith("batches_one_call")
                    ? "oneCall"
                    : g.startsWith("batches_total")
                            ? "applied"
                            : g.startsWith("rank_maps_loads")
                                    ? "mapLoads"
                                    : g.startsWith("rank_maps_stale") ? "stale" : "stored";
            counters.merge(key, Double.parseDouble(m.group(2)), Double::sum);
        }
        return counters;
    }

    /** Waits until the bridge forwarded everything queued before (its counter stands still for 2 s). */
    private static void drain(SimpleMeterRegistry registry) throws InterruptedException {
        long start = System.nanoTime();
        double last = -1;
        while (forwardedBlocks(registry) != last) {
            last = forwardedBlocks(registry);
            Thread.sleep(2000);
        }
        System.out.printf("(drained the previous phase's backlog in %.1f s)%n", (System.nanoTime() - start) / 1e9);
    }

    private static double forwardedBlocks(SimpleMeterRegistry registry) {
        return registry.counter("kvreuse.agent.kv.events.forwarded").count() * BLOCKS_PER_EVENT;
    }

    private static double count(SimpleMeterRegistry registry, String name) {
        return registry.counter("kvreuse.agent.kv.events." + name).count();
    }

    /** Unpaced publishers, each at most a window of batches ahead of what was applied. */
    private static void throughput(List<Stream> streams, SimpleMeterRegistry registry, int seconds)
            throws InterruptedException {
        System.out.println("== throughput: " + streams.size() + " streams, " + BLOCKS_PER_BATCH
                + " blocks per engine batch, unpaced for " + seconds + " s");
        double before = forwardedBlocks(registry);
        long start = System.nanoTime();
        long end = start + Duration.ofSeconds(seconds).toNanos();
        long window = 64L * streams.size();
        long published = 0;
        while (System.nanoTime() < end) {
            double applied = (forwardedBlocks(registry) - before) / BLOCKS_PER_BATCH;
            if (published - applied > window) {
                LockSupport.parkNanos(200_000);
                continue;
            }
            for (Stream s : streams) {
                s.publishLoad();
                published++;
            }
        }
        long target = published;
        while ((forwardedBlocks(registry) - before) / BLOCKS_PER_BATCH < target) {
            Thread.sleep(5);
        }
        double elapsed = (System.nanoTime() - start) / 1e9;
        double blocks = forwardedBlocks(registry) - before;
        System.out.printf(
                "throughput: %.0f block events durable in %.2f s = %.0f block events/s (%.0f engine batches/s); "
                        + "control-plane apply per forwarded batch p50 %.1f ms, p99 %.1f ms%n",
                blocks,
                elapsed,
                blocks / elapsed,
                target / elapsed,
                percentileMs(registry, 0.5),
                percentileMs(registry, 0.99));
    }

    private static double percentileMs(SimpleMeterRegistry registry, double p) {
        var snapshot = registry.timer("kvreuse.agent.kv.events.post").takeSnapshot();
        for (var v : snapshot.percentileValues()) {
            if (v.percentile() == p) {
                return v.value(java.util.concurrent.TimeUnit.MILLISECONDS);
            }
        }
        return Double.NaN;
    }

    /** Paced background load; every 100 ms a fresh probe chain, polled in donor selection until it is a hint. */
    private static void lag(
            KvReuseClient http,
            RestBenchmark.Fleet fleet,
            List<Stream> streams,
            SimpleMeterRegistry registry,
            ProbeTimedFeed feed,
            int rate,
            int seconds)
            throws Exception {
        System.out.println("== lag: background " + rate + " block events/s over " + streams.size()
                + " streams, a probe chain every 100 ms for " + seconds + " s");
        double batchesPerSecond = (double) rate / BLOCKS_PER_BATCH;
        long interval = (long) (1e9 / batchesPerSecond);
        Thread load = Thread.ofPlatform().name("bench-load").start(() -> {
            long next = System.nanoTime();
            int i = 0;
            while (!Thread.currentThread().isInterrupted()) {
                long now = System.nanoTime();
                if (now < next) {
                    LockSupport.parkNanos(next - now);
                    continue;
                }
                streams.get(i++ % streams.size()).publishLoad();
                next += interval;
            }
        });
        double before = forwardedBlocks(registry);
        long started = System.nanoTime();
        List<Long> lags = new ArrayList<>();
        List<Long> probeAt = new ArrayList<>(); // when each probe was published, from the phase's start
        List<String> probeDetail = new ArrayList<>(); // each probe's breakdown, for the slowest ones
        List<Long> firstPostStarted = new ArrayList<>();
        List<Long> bothPosted = new ArrayList<>();
        List<Long> postedToVisible = new ArrayList<>();
        List<Long> postTook = new ArrayList<>();
        List<Long> secondPostStarted = new ArrayList<>();
        List<Long> pollTook = new ArrayList<>();
        SplittableRandom random = new SplittableRandom(11);
        String target = fleet.targets.getFirst();
        List<Stream> probed = streams.subList(0, RestBenchmark.TP); // every rank of the first donor
        long end = System.nanoTime() + Duration.ofSeconds(seconds).toNanos();
        int probe = 0;
        long polls = 0;
        while (System.nanoTime() < end) {
            long[] chain = random.longs(PROBE_BLOCKS).toArray();
            int slot = (probe++ * PROBE_BLOCKS) % PROBE_SLOTS;
            feed.expect(chain[0]);
            long t0 = System.nanoTime();
            for (Stream rank : probed) {
                rank.publishChain(chain, slot);
            }
            String body = selection(target, chain);
            while (true) {
                long asked = System.nanoTime();
                HttpResponse<String> answer = http.sendAsync(
                                http.request("POST", "/api/v1/donor-selections", fleet.router, body))
                        .get();
                pollTook.add(System.nanoTime() - asked);
                if (answer.body().startsWith("{\"decision\":\"HINT\"")) {
                    long visible = System.nanoTime();
                    lags.add(visible - t0);
                    probeAt.add(t0 - started);
                    String detail = "";
                    synchronized (feed) {
                        if (feed.allEnded()) {
                            long firstSent = Long.MAX_VALUE;
                            long lastSent = Long.MIN_VALUE;
                            long posted = Long.MIN_VALUE;
                            StringBuilder sent = new StringBuilder();
                            StringBuilder answered = new StringBuilder();
                            for (int r = 0; r < feed.started.length; r++) {
                                firstSent = Math.min(firstSent, feed.started[r]);
                                lastSent = Math.max(lastSent, feed.started[r]);
                                posted = Math.max(posted, feed.ended[r]);
                                postTook.add(feed.ended[r] - feed.started[r]);
                                sent.append(r == 0 ? "" : " / ")
                                        .append(String.format("+%.1f", (feed.started[r] - t0) / 1e6));
                                answered.append(r == 0 ? "" : " / ")
                                        .append(String.format("+%.1f", (feed.ended[r] - t0) / 1e6));
                            }
                            detail = String.format(
                                    " (%s; posts sent %s, answered %s ms)",
                                    java.time.Instant.ofEpochMilli(
                                            System.currentTimeMillis() - (visible - t0) / 1_000_000),
                                    sent,
                                    answered);
                            firstPostStarted.add(firstSent - t0);
                            bothPosted.add(posted - t0);
                            postedToVisible.add(visible - posted);
                            secondPostStarted.add(lastSent - t0);
                        }
                    }
                    probeDetail.add(detail);
                    break;
                }
                if (System.nanoTime() - t0 > Duration.ofSeconds(10).toNanos()) {
                    System.out.println("probe not visible after 10 s: " + answer.body());
                    lags.add(Long.MAX_VALUE);
                    probeAt.add(t0 - started);
                    probeDetail.add("");
                    break;
                }
                polls++;
                if (POLL_PAUSE_NANOS > 0) {
                    LockSupport.parkNanos(POLL_PAUSE_NANOS);
                }
            }
            Thread.sleep(100);
        }
        load.interrupt();
        load.join();
        double elapsed = (System.nanoTime() - started) / 1e9;
        long[] sorted = lags.stream().mapToLong(Long::longValue).sorted().toArray();
        if (sorted.length == 0) {
            System.out.println("lag: no probe completed");
            return;
        }
        long invisible = lags.stream().filter(l -> l == Long.MAX_VALUE).count();
        if (invisible > 0) {
            System.out.println("lag: " + invisible + " of " + sorted.length + " probes were not visible within 10 s");
        }
        System.out.printf(
                "lag: background applied %.0f block events/s; publish->visible in donor selection over %d probes: "
                        + "p50 %s, p99 %s, max %s (includes one selection round trip per poll)%n",
                (forwardedBlocks(registry) - before) / elapsed,
                sorted.length,
                lagMs(sorted[sorted.length / 2]),
                lagMs(sorted[Math.min(sorted.length - 1, (int) Math.ceil(sorted.length * 0.99) - 1)]),
                lagMs(sorted[sorted.length - 1]));
        System.out.printf(
                "lag: %.1f selection polls per probe before it was visible, %d µs apart; a poll's round trip"
                        + " p50 %s, p99 %s%n",
                (double) polls / sorted.length,
                POLL_PAUSE_NANOS / 1_000,
                percentile(pollTook, 0.5),
                percentile(pollTook, 0.99));
        System.out.printf(
                "lag, where it went (%d probes, p50 / p99): publish->first rank's post sent %s / %s; "
                        + "second rank's post sent %s / %s; one post took %s / %s; "
                        + "publish->both ranks' posts answered %s / %s; answered->visible %s / %s%n",
                bothPosted.size(),
                percentile(firstPostStarted, 0.5),
                percentile(firstPostStarted, 0.99),
                percentile(secondPostStarted, 0.5),
                percentile(secondPostStarted, 0.99),
                percentile(postTook, 0.5),
                percentile(postTook, 0.99),
                percentile(bothPosted, 0.5),
                percentile(bothPosted, 0.99),
                percentile(postedToVisible, 0.5),
                percentile(postedToVisible, 0.99));
        // when the slowest probes were published: a tail bunched in time is a stall, spread out is load
        Integer[] slowest = java.util.stream.IntStream.range(0, lags.size())
                .boxed()
                .sorted((a, b) -> Long.compare(lags.get(b), lags.get(a)))
                .limit(5)
                .toArray(Integer[]::new);
        StringBuilder at = new StringBuilder();
        for (int k : slowest) {
            at.append(at.isEmpty() ? "" : ", ")
                    .append(lagMs(lags.get(k)))
                    .append(String.format(" at %.1f s", probeAt.get(k) / 1e9))
                    .append(probeDetail.get(k));
        }
        System.out.println("lag: the slowest probes, by when they were published in the phase: " + at);
    }

    private static String percentile(List<Long> nanos, double q) {
        if (nanos.isEmpty()) {
            return "-";
        }
        long[] sorted = nanos.stream().mapToLong(Long::longValue).sorted().toArray();
        return lagMs(sorted[Math.min(sorted.length - 1, Math.max(0, (int) Math.ceil(sorted.length * q) - 1))]);
    }

    /** A probe's lag, or that it never became visible. */
    private static String lagMs(long nanos) {
        return nanos == Long.MAX_VALUE ? "not visible within 10 s" : String.format("%.1f ms", nanos / 1e6);
    }

    private static String selection(String target, long[] chain) {
        StringBuilder json = new StringBuilder("{\"requestId\":\"")
                .append(UUID.randomUUID())
                .append("\",\"targetIncarnationId\":\"")
                .append(target)
                .append("\",\"seqHashes\":[");
        for (int i = 0; i < chain.length; i++) {
            json.append(i > 0 ? "," : "")
                    .append('"')
                    .append(Long.toUnsignedString(chain[i]))
                    .append('"');
        }
        return json.append("],\"localPrefixBlocks\":0}").toString();
    }

    /**
     * Random withheld batches (the replay must return them), lost sequences and publisher restarts;
     * after each break the rank is snapshotted and the stream resumes. Every published batch must be
     * applied or dropped-and-counted while its rank awaited a snapshot.
     */
    /** The loss run; false (after saying so loudly) when an event is unaccounted for. */
    private static boolean loss(KvReuseClient http, List<Stream> streams, SimpleMeterRegistry registry, int seconds)
            throws Exception {
        System.out.println("== loss accounting: " + seconds + " s, random withheld batches, lost sequences, restarts");
        double forwarded0 = count(registry, "forwarded");
        double dropped0 = count(registry, "awaiting.snapshot");
        double breaks0 = count(registry, "gaps.unrecovered") + count(registry, "restarts");
        double replayed0 = count(registry, "replayed");
        double recorded0 = count(registry, "gaps.recorded");
        SplittableRandom random = new SplittableRandom(5);
        long published = 0;
        long withheld = 0;
        long lost = 0;
        long restarts = 0;
        long snapshots = 0;
        long end = System.nanoTime() + Duration.ofSeconds(seconds).toNanos();
        long nextCheck = 0;
        long nextProgress = System.nanoTime() + 60_000_000_000L;
        while (System.nanoTime() < end) {
            if (System.nanoTime() > nextProgress) {
                System.out.printf(
                        "loss: %d s left, published %d engine batches so far (%d withheld, %d lost-sequence gaps, %d"
                                + " restarts)%n",
                        (end - System.nanoTime()) / 1_000_000_000L, published, withheld, lost, restarts);
                nextProgress += 60_000_000_000L;
            }
            Stream s = streams.get(random.nextInt(streams.size()));
            if (s.pausedUntil > System.nanoTime()) {
                LockSupport.parkNanos(1_000_000);
                continue; // until the bridge resubscribed behind the snapshot: nothing falls between
            }
            int dice = random.nextInt(1000);
            if (dice < 20) {
                s.withholdLoad();
                withheld++;
                published++;
            } else if (dice < 22) {
                s.lose(1 + random.nextInt(3));
                lost++;
            } else if (dice < 23 && !s.withheldPending) {
                s.restart();
                restarts++;
            } else {
                s.publishLoad();
                published++;
            }
            LockSupport.parkNanos(10_000_000);
            if (System.nanoTime() > nextCheck) {
                for (Stream t : streams) {
                    snapshots += t.snapshotIfBroken(http);
                }
                nextCheck = System.nanoTime() + 500_000_000L;
            }
        }
        // drain: a final batch on each stream delivers withheld ones through replay
        for (Stream s : streams) {
            s.publishLoad();
            published++;
        }
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (System.nanoTime() < deadline) {
            for (Stream t : streams) {
                snapshots += t.snapshotIfBroken(http);
            }
            // a withheld batch the replay did not return (it timed out, or lost sequences behind it
            // made the gap unrecoverable) is never applied: its rank's break is on record instead
            double unreplayed = withheld - (count(registry, "replayed") - replayed0);
            double accounted = (count(registry, "forwarded") - forwarded0) / EVENTS_PER_BATCH
                    + count(registry, "awaiting.snapshot")
                    - dropped0
                    + unreplayed;
            if (accounted >= published) {
                break;
            }
            Thread.sleep(100);
        }
        double applied = (count(registry, "forwarded") - forwarded0) / EVENTS_PER_BATCH;
        double dropped = count(registry, "awaiting.snapshot") - dropped0;
        long unreplayed = Math.round(withheld - (count(registry, "replayed") - replayed0));
        long covered = 0;
        long pending = 0;
        for (Stream t : streams) {
            covered += t.withheldBeforeSnapshots;
            pending += t.withheldSinceSnapshot;
        }
        System.out.printf(
                "loss: published %d engine batches (%d first withheld), %d lost-sequence gaps, %d publisher restarts; "
                        + "applied %.0f + dropped while awaiting a snapshot %.0f + withheld, not replayed, inside a"
                        + " reported gap and snapshotted %d = %.0f (unaccounted %.0f); "
                        + "replayed %.0f (filled gaps reported for the audit trail %.0f), stream breaks reported %.0f,"
                        + " snapshots sent %d%n",
                published,
                withheld,
                lost,
                restarts,
                applied,
                dropped,
                unreplayed,
                applied + dropped + unreplayed,
                published - applied - dropped - unreplayed,
                count(registry, "replayed") - replayed0,
                count(registry, "gaps.recorded") - recorded0,
                count(registry, "gaps.unrecovered") + count(registry, "restarts") - breaks0,
                snapshots);
        long unaccounted = Math.round(published - applied - dropped - unreplayed);
        String failure = null;
        if (unaccounted > 0) {
            failure = unaccounted + " engine batches published but neither applied nor dropped after a recorded break";
        } else if (unaccounted < 0) {
            failure = -unaccounted + " engine batches more applied or dropped than published (applied twice?)";
        } else if (unreplayed > covered) {
            // an unreplayed withheld batch is accounted for only when its rank was snapshotted after it
            failure = (unreplayed - covered) + " withheld batches were never replayed on a stream that was not"
                    + " snapshotted after them (" + pending + " withheld since the last snapshots)";
        }
        if (failure != null) {
            System.out.println("LOSS ACCOUNTING FAILED: " + failure);
            return false;
        }
        System.out.println("loss: accounting holds (published = applied + reported-as-gap-then-snapshotted)");
        return true;
    }

    /**
     * The engine stand-ins' ZMQ context, one for all of them: one I/O thread serves every stand-in's
     * sockets. Engines publish from their own processes on the GPU hosts; here they share the two
     * cores with the control plane, its database and the bridge, and with a context each their eight
     * I/O threads took about 0.16 cores together at 50,000 block events/s, for work that is not the
     * system's.
     */
    static final ZContext ENGINES = new ZContext(1);

    /**
     * Engine batches each stand-in keeps for its replay socket, as an engine's bounded replay buffer
     * does (vLLM keeps the last 10,000 steps by default). The stand-ins live in the benchmark's 1 GB
     * heap beside the bridge and the router: kept by the hundred thousand, the throughput phase's
     * batches (about 1.8 KB each) filled it, and the lag phase that followed measured the benchmark's
     * own garbage collector (the bridge and the router paused, probes of 200–460 ms).
     */
    static final int REPLAY_BATCHES = 10_000;

    /** One rank's engine publisher: PUB + ROUTER replay, vLLM EventBatch maps with slots. */
    static final class Stream {
        final RestBenchmark.Fleet.Donor donor;
        final int rank;
        final int capacity;
        final String endpoint;
        final String replayEndpoint;
        private final ZMQ.Socket pub;
        private final ZMQ.Socket router;
        private final ConcurrentSkipListMap<Long, byte[]> history = new ConcurrentSkipListMap<>();
        private final Thread replay;
        private volatile boolean running = true;
        private long next;
        private int slot = PROBE_SLOTS;
        /** After a snapshot, the stream publishes again once the bridge resubscribed. */
        volatile long pausedUntil;
        /** Batches withheld since this rank's last snapshot, and those before one (covered by it). */
        volatile long withheldSinceSnapshot;

        volatile long withheldBeforeSnapshots;

        /** A withheld batch the next live one will make the subscriber replay. */
        volatile boolean withheldPending;

        private final SplittableRandom random;
        private final List<byte[]> prebuilt = new ArrayList<>();

        Stream(RestBenchmark.Fleet.Donor donor, int rank, int capacity) {
            this.donor = donor;
            this.rank = rank;
            this.capacity = capacity;
            this.random = new SplittableRandom(donor.id().hashCode() * 31L + rank);
            pub = ENGINES.createSocket(SocketType.PUB);
            pub.setSndHWM(2_000_000);
            pub.bind("tcp://127.0.0.1:*");
            endpoint = pub.getLastEndpoint();
            router = ENGINES.createSocket(SocketType.ROUTER);
            router.bind("tcp://127.0.0.1:*");
            replayEndpoint = router.getLastEndpoint();
            replay = Thread.ofPlatform().daemon().start(this::serve);
        }

        synchronized void publishLoad() {
            send(next++, load());
            withheldPending = false;
        }

        /** One of a few load batches built beforehand, so publishing costs the benchmark little. */
        synchronized void publishPrebuilt() {
            if (prebuilt.isEmpty()) {
                for (int i = 0; i < 64; i++) {
                    prebuilt.add(load());
                }
            }
            send(next++, prebuilt.get((int) (next % prebuilt.size())));
        }

        synchronized void withholdLoad() {
            history.put(next++, load());
            withheldPending = true;
            withheldSinceSnapshot++;
        }

        synchronized void lose(int n) {
            next += n;
        }

        synchronized void restart() {
            history.clear();
            next = 0;
        }

        /** The same fresh chain on this rank, at slots below the background load's. */
        synchronized void publishChain(long[] chain, int firstSlot) {
            send(next++, batch(List.of(stored(chain, null, firstSlot))));
        }

        private byte[] load() {
            List<byte[]> events = new ArrayList<>(EVENTS_PER_BATCH);
            for (int e = 0; e < EVENTS_PER_BATCH; e++) {
                if (slot + BLOCKS_PER_EVENT > capacity) {
                    slot = PROBE_SLOTS;
                }
                events.add(stored(random.longs(BLOCKS_PER_EVENT).toArray(), null, slot));
                slot += BLOCKS_PER_EVENT;
            }
            return batch(events);
        }

        private void send(long seq, byte[] payload) {
            history.put(seq, payload);
            while (history.size() > REPLAY_BATCHES) {
                history.pollFirstEntry();
            }
            pub.sendMore("".getBytes(StandardCharsets.UTF_8));
            pub.sendMore(ByteBuffer.allocate(8).putLong(seq).array());
            pub.send(payload);
        }

        /** Snapshots a broken rank as empty through the current sequence; 1 when it did. */
        int snapshotIfBroken(KvReuseClient http) throws Exception {
            var view = http.send("GET", "/api/v1/banks/" + donor.bankId(), donor.token(), null, 200);
            var part = view.get("parts").get(rank);
            if (!part.get("needsSnapshot").asBoolean()) {
                return 0;
            }
            long seq;
            synchronized (this) {
                seq = next - 1;
            }
            http.send(
                    "PUT",
                    "/api/v1/banks/" + donor.bankId() + "/parts/" + rank + "/snapshot",
                    donor.token(),
                    Map.of(
                            "throughEventId",
                            part.get("appliedThroughEventId").asLong(),
                            "blocks",
                            List.of(),
                            "sourceSequence",
                            Math.max(0, seq)),
                    200);
            pausedUntil = System.nanoTime() + 2_000_000_000L;
            synchronized (this) {
                withheldBeforeSnapshots += withheldSinceSnapshot;
                withheldSinceSnapshot = 0;
            }
            return 1;
        }

        private static byte[] stored(long[] hashes, Long parent, int firstSlot) {
            try (MessageBufferPacker p = MessagePack.newDefaultBufferPacker()) {
                p.packMapHeader(5);
                p.packString("type").packString("BlockStored");
                p.packString("block_hashes").packArrayHeader(hashes.length);
                for (long h : hashes) {
                    p.packBigInteger(new BigInteger(Long.toUnsignedString(h)));
                }
                p.packString("parent_block_hash");
                if (parent == null) {
                    p.packNil();
                } else {
                    p.packLong(parent);
                }
                p.packString("medium").packString("GPU");
                p.packString("slots").packArrayHeader(hashes.length);
                for (int i = 0; i < hashes.length; i++) {
                    p.packInt(firstSlot + i);
                }
                return p.toByteArray();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        /** Positional roots of chains would carry positions 0.. each; here every block is its own root. */
        private static byte[] batch(List<byte[]> events) {
            try (MessageBufferPacker p = MessagePack.newDefaultBufferPacker()) {
                p.packMapHeader(3);
                p.packString("ts").packDouble(System.currentTimeMillis() / 1000.0);
                p.packString("events").packArrayHeader(events.size());
                for (byte[] e : events) {
                    p.writePayload(e);
                }
                p.packString("data_parallel_rank").packNil();
                return p.toByteArray();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        private void serve() {
            router.setReceiveTimeOut(100);
            while (running) {
                try {
                    byte[] id = router.recv();
                    if (id == null) {
                        continue;
                    }
                    List<byte[]> frames = new ArrayList<>();
                    while (router.hasReceiveMore()) {
                        frames.add(router.recv());
                    }
                    long from = ByteBuffer.wrap(frames.getLast()).getLong();
                    for (var e : history.tailMap(from).entrySet()) {
                        router.sendMore(id);
                        router.sendMore(new byte[0]);
                        router.sendMore(
                                ByteBuffer.allocate(8).putLong(e.getKey()).array());
                        router.send(e.getValue());
                    }
                    router.sendMore(id);
                    router.sendMore(new byte[0]);
                    router.sendMore(ByteBuffer.allocate(8).putLong(-1).array());
                    router.send(new byte[0]);
                } catch (org.zeromq.ZMQException e) {
                    return;
                }
            }
        }

        void close() {
            running = false;
            try {
                replay.join(500);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            ENGINES.destroySocket(pub);
            ENGINES.destroySocket(router);
        }
    }
}
