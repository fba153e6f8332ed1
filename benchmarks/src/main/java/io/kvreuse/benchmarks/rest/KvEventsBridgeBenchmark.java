package io.kvreuse.benchmarks.rest;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.kvreuse.agent.kvevents.HttpInventoryFeed;
import io.kvreuse.agent.kvevents.KvEventBridge;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * The node agent's KV event bridge by itself, without durable ingestion: real ZMQ publishers (vLLM
 * EventBatch maps, the same shape as {@link KvEventsBenchmark}'s) → the bridge (receive, msgpack
 * decode, mapping, merged batches, JSON, HTTP POST) → a real HTTP server in this process that only
 * counts the blocks in each posted batch and acknowledges it. This is a split measurement of the
 * agent's own ceiling, not an end-to-end figure: the control plane applies nothing here.
 *
 * <p>Arguments: streams (default 8), seconds (default 15).
 */
public final class KvEventsBridgeBenchmark {

    private static final byte[] SEQ_HASH = "\"seqHash\"".getBytes(StandardCharsets.US_ASCII);

    private KvEventsBridgeBenchmark() {}

    public static void main(String[] args) throws Exception {
        int streamCount = args.length > 0 ? Integer.parseInt(args[0]) : 8;
        int seconds = args.length > 1 ? Integer.parseInt(args[1]) : 15;
        System.out.println(run(streamCount, seconds));
    }

    /** Runs the phase and answers its result line. */
    static String run(int streamCount, int seconds) throws Exception {
        String host = "bench-host-0";
        int capacity = 32 * 256;
        List<KvEventsBenchmark.Stream> streams = new ArrayList<>();
        List<UUID> banks = new ArrayList<>();
        for (int b = 0; b < (streamCount + 1) / 2; b++) {
            UUID bank = UUID.randomUUID();
            banks.add(bank);
            var donor = new RestBenchmark.Fleet.Donor("", UUID.randomUUID().toString(), bank.toString(), List.of());
            for (int r = 0; r < 2 && streams.size() < streamCount; r++) {
                streams.add(new KvEventsBenchmark.Stream(donor, r, capacity));
            }
        }
        Counting counting = new Counting(sources(streams));
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 64);
        ExecutorService pool = Executors.newFixedThreadPool(4);
        server.setExecutor(pool);
        server.createContext("/", counting::handle);
        server.start();
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (KvEventBridge bridge = new KvEventBridge(
                new HttpInventoryFeed(
                        URI.create("http://127.0.0.1:" + server.getAddress().getPort()), "bench-token", host),
                registry,
                Duration.ofHours(1),
                Duration.ofMillis(50))) {
            bridge.refresh();
            Thread.sleep(1000);
            // warm-up, then the measured run
            publish(streams, counting, 3);
            long blocks0 = counting.blocks.get();
            long posts0 = counting.posts.get();
            long cpu0 = cpuNanos();
            long bridgeCpu0 = bridgeCpuNanos();
            long started = System.nanoTime();
            long published = publish(streams, counting, seconds);
            double elapsed = (System.nanoTime() - started) / 1e9;
            double cpu = (cpuNanos() - cpu0) / 1e9;
            double bridgeCpu = (bridgeCpuNanos() - bridgeCpu0) / 1e9;
            long blocks = counting.blocks.get() - blocks0;
            long posts = counting.posts.get() - posts0;
            return String.format(
                    "bridge alone (HTTP stand-in that only counts, NOT durable): %d streams, %d engine batches of %d"
                            + " blocks -> %d block events posted in %.2f s = %.0f block events/s; %d POSTs, %.0f"
                            + " blocks per POST; bridge threads' CPU %.2f s = %.2f us per block event (receive, decode,"
                            + " map, JSON, HTTP client; ZMQ I/O threads not included); process CPU %.1f s (%.2f"
                            + " cores; publishers and stand-in included); load %s",
                    streams.size(),
                    published,
                    KvEventsBenchmark.blocksPerBatch(),
                    blocks,
                    elapsed,
                    blocks / elapsed,
                    posts,
                    posts == 0 ? 0.0 : (double) blocks / posts,
                    bridgeCpu,
                    blocks == 0 ? 0.0 : bridgeCpu * 1e6 / blocks,
                    cpu,
                    cpu / elapsed,
                    loadAverage());
        } finally {
            server.stop(0);
            pool.shutdownNow();
            streams.forEach(KvEventsBenchmark.Stream::close);
        }
    }

    /** Unpaced publishers, each at most a window of batches ahead of what the stand-in received; waits for the rest. */
    private static long publish(List<KvEventsBenchmark.Stream> streams, Counting counting, int seconds)
            throws InterruptedException {
        int perBatch = KvEventsBenchmark.blocksPerBatch();
        long before = counting.blocks.get();
        long end = System.nanoTime() + Duration.ofSeconds(seconds).toNanos();
        long window = 512L * streams.size();
        long published = 0;
        while (System.nanoTime() < end) {
            long received = (counting.blocks.get() - before) / perBatch;
            if (published - received > window) {
                LockSupport.parkNanos(200_000);
                continue;
            }
            for (KvEventsBenchmark.Stream s : streams) {
                s.publishPrebuilt();
                published++;
            }
        }
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while ((counting.blocks.get() - before) / perBatch < published && System.nanoTime() < deadline) {
            Thread.sleep(2);
        }
        return published;
    }

    /** CPU time of the bridge's own threads: subscribers, forwarders and the JDK HTTP client's. */
    private static long bridgeCpuNanos() {
        var threads = ManagementFactory.getThreadMXBean();
        long sum = 0;
        for (var info : threads.getThreadInfo(threads.getAllThreadIds())) {
            if (info != null
                    && (info.getThreadName().startsWith("kvreuse-kv-events")
                            || info.getThreadName().startsWith("HttpClient"))) {
                sum += Math.max(0, threads.getThreadCpuTime(info.getThreadId()));
            }
        }
        return sum;
    }

    private static String loadAverage() {
        try {
            return java.nio.file.Files.readString(java.nio.file.Path.of("/proc/loadavg"))
                    .substring(0, 14)
                    .trim();
        } catch (IOException | RuntimeException e) {
            return "unknown";
        }
    }

    private static long cpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
    }

    /** The event-source list the stand-in serves: every rank fresh (nothing applied, no snapshot needed). */
    private static String sources(List<KvEventsBenchmark.Stream> streams) {
        StringBuilder json = new StringBuilder("[");
        String bank = null;
        for (KvEventsBenchmark.Stream s : streams) {
            if (!s.donor.bankId().equals(bank)) {
                if (bank != null) {
                    json.append("]},");
                }
                bank = s.donor.bankId();
                json.append("{\"bankId\":\"")
                        .append(bank)
                        .append("\",\"incarnationId\":\"")
                        .append(s.donor.id())
                        .append("\",\"bankEpoch\":1,\"capacityBlocks\":")
                        .append(s.capacity)
                        .append(",\"format\":\"VLLM_KV_EVENTS\",\"allBlocksCleared\":\"NATIVE_CACHE_CLEARED\","
                                + "\"revision\":1,\"streams\":[");
            } else {
                json.append(',');
            }
            json.append("{\"rank\":")
                    .append(s.rank)
                    .append(",\"endpoint\":\"")
                    .append(s.endpoint)
                    .append("\",\"replayEndpoint\":\"")
                    .append(s.replayEndpoint)
                    .append("\",\"appliedThroughEventId\":0,\"eventsStarted\":false,\"needsSnapshot\":false}");
        }
        return json.append("]}]").toString();
    }

    /** Answers the event-source list, and acknowledges each posted batch after counting its blocks. */
    private static final class Counting {
        final AtomicLong blocks = new AtomicLong();
        final AtomicLong posts = new AtomicLong();
        private final byte[] sources;

        Counting(String sources) {
            this.sources = sources.getBytes(StandardCharsets.UTF_8);
        }

        void handle(HttpExchange exchange) throws IOException {
            byte[] answer;
            try (InputStream in = exchange.getRequestBody()) {
                if (exchange.getRequestMethod().equals("GET")) {
                    answer = sources;
                } else {
                    byte[] body = in.readAllBytes();
                    blocks.addAndGet(occurrences(body));
                    posts.incrementAndGet();
                    answer = "{\"appliedThroughEventId\":0}".getBytes(StandardCharsets.US_ASCII);
                }
            }
            exchange.getResponseHeaders().add("Content-Type", "application/json");
            exchange.sendResponseHeaders(200, answer.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(answer);
            }
        }

        private static long occurrences(byte[] body) {
            long n = 0;
            outer:
            for (int i = 0; i + SEQ_HASH.length <= body.length; i++) {
                if (body[i] != '"') {
                    continue;
                }
                for (int j = 1; j < SEQ_HASH.length; j++) {
                    if (body[i + j] != SEQ_HASH[j]) {
                        continue outer;
                    }
                }
                n++;
                i += SEQ_HASH.length - 1;
            }
            return n;
        }
    }
}
