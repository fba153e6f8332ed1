package io.kvreuse.benchmarks.rest;

import io.kvreuse.testkit.FleetBuilder;
import io.kvreuse.testkit.KvReuseClient;
import io.kvreuse.testkit.SampleContracts;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * REST benchmarks of the router's hot path against the built jar: inventory ingestion durable in
 * PostgreSQL, then open-loop donor selection (each hint writes its PROPOSED lease) beside a trivial
 * endpoint of the same server, in one run.
 *
 * <p>Usage: {@code java -cp benchmarks.jar io.kvreuse.benchmarks.rest.RestBenchmark <kvreuse.jar> [rate] [seconds]
 * [ingest]}; with {@code ingest} only the ingestion phase runs.
 */
public final class RestBenchmark {

    /** Ranks per engine (-Dkvreuse.bench.tp, default 2). */
    static final int TP = Integer.getInteger("kvreuse.bench.tp", 2);

    private static final int HOSTS = 4;
    private static final int DONORS_PER_HOST = 4;
    private static final int CONVERSATIONS_PER_DONOR = 32;
    private static final int CHAIN = 256;
    private static final int BATCH = 1024;

    private RestBenchmark() {}

    public static void main(String[] args) throws Exception {
        Path jar = Path.of(args.length > 0 ? args[0] : "app/target/kvreuse.jar");
        int rate = args.length > 1 ? Integer.parseInt(args[1]) : 1000;
        double seconds = args.length > 2 ? Double.parseDouble(args[2]) : 30;
        boolean ingestOnly = args.length > 3 && args[3].equals("ingest");
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        try (ControlPlane cp = ControlPlane.start(jar, ControlPlane.tempHome(), java)) {
            KvReuseClient http = new KvReuseClient(cp.baseUrl);
            Fleet fleet = Fleet.build(http, cp.operator);
            ingest(http, fleet, cp);
            if (ingestOnly) {
                return;
            }
            String router = fleet.router;
            SplittableRandom random = new SplittableRandom(42);
            var selection = (java.util.function.IntFunction<java.net.http.HttpRequest>)
                    i -> http.request("POST", "/api/v1/donor-selections", router, fleet.request(random.split()));
            var trivial = (java.util.function.IntFunction<java.net.http.HttpRequest>)
                    i -> http.request("GET", "/actuator/health/liveness", router, null);
            int warmUp = Integer.getInteger("kvreuse.bench.select.warmup", 10);
            System.out.println("== warm-up (" + warmUp + " s of selections at " + rate / 2 + "/s)");
            OpenLoop.run(http, rate / 2, warmUp, selection, RestBenchmark::decision);
            OpenLoop.run(http, rate / 2, 5, trivial, r -> "status " + r.statusCode());
            System.out.println("== measured, open loop at " + rate + "/s");
            double[] cpu0 = cpuNow(cp);
            OpenLoop.Result trivialResult =
                    OpenLoop.run(http, rate, Math.max(10, seconds / 2), trivial, r -> "status " + r.statusCode());
            double[] cpu1 = cpuNow(cp);
            ServerHistogram before = ServerHistogram.read(http, cp.operator);
            double[] cpu2 = cpuNow(cp);
            OpenLoop.Result selectionResult = OpenLoop.run(http, rate, seconds, selection, RestBenchmark::decision);
            double[] cpu3 = cpuNow(cp);
            ServerHistogram during = ServerHistogram.read(http, cp.operator).minus(before);
            System.out.println(trivialResult.summary("GET liveness"));
            System.out.println(selectionResult.summary("POST donor-selections"));
            printCpu("GET liveness", cpu0, cpu1, trivialResult.sent());
            printCpu("POST donor-selections", cpu2, cpu3, selectionResult.sent());
            System.out.printf(
                    "server-side selection time (kvreuse_selection_latency, parsed request to answer): "
                            + "p50 <= %.3f ms, p99 <= %.3f ms, p99.9 <= %.3f ms over %d selections%n",
                    during.percentileMs(50), during.percentileMs(99), during.percentileMs(99.9), during.count());
            System.out.printf(
                    "median ratio selection/trivial: %.2f%n",
                    (double) selectionResult.percentile(50) / Math.max(1, trivialResult.percentile(50)));
        }
    }

    /** CPU seconds so far: the control plane, its PostgreSQL, its JIT compilers, and this load generator. */
    private static double[] cpuNow(ControlPlane cp) {
        double[] server = cp.cpuSeconds();
        return new double[] {server[0], server[1], server[2], ControlPlane.cpu(ProcessHandle.current())};
    }

    /**
     * CPU per request of one phase, by process: what a request costs the machine, where the latency
     * figures only say whether the machine kept up.
     */
    private static void printCpu(String phase, double[] before, double[] after, int requests) {
        double[] ms = new double[4];
        for (int i = 0; i < 4; i++) {
            ms[i] = (after[i] - before[i]) * 1000 / Math.max(1, requests);
        }
        System.out.printf(
                "%-24s CPU per request: control plane %.3f ms (its JIT compilers %.3f), PostgreSQL %.3f ms,"
                        + " load generator %.3f ms; %.3f ms in all%n",
                phase, ms[0], ms[2], ms[1], ms[3], ms[0] + ms[1] + ms[3]);
    }

    private static String decision(java.net.http.HttpResponse<String> r) {
        String body = r.body();
        if (body.startsWith("{\"decision\":\"HINT\"")) {
            return "HINT";
        }
        int i = body.indexOf("\"reason\":\"");
        return i < 0 ? "status " + r.statusCode() : body.substring(i + 10, body.indexOf('"', i + 10));
    }

    /**
     * Ingestion in passes of the same shape: the first into empty banks on a server just started, then
     * {@code kvreuse.bench.ingest.warmups} (default 12, about a minute, like the lease benchmark's
     * warm-up) passes that reuse every slot of every bank with new conversations (a decode engine's
     * steady state: each STORED block replaces the one at its slot, which leaves the index as a
     * REMOVE), then the measured pass, the same again with the chains the selection phase asks for. The
     * eviction warm-ups are there because the JIT keeps compiling long after the first pass: its
     * compiler threads were a third of the control plane's CPU in the second pass and still a fifth
     * in the fifth; with twenty passes they fell under a tenth after about twelve (2026-12-03). Each
     * pass prints that share; {@code -Dkvreuse.bench.ingest.warmups=3} is the shape recorded on the
     * morning of 2026-12-03, {@code 0} the two-pass shape of the figures before.
     */
    private static void ingest(KvReuseClient http, Fleet fleet, ControlPlane cp) throws Exception {
        Map<String, long[]> next = new HashMap<>();
        SplittableRandom throwaway = new SplittableRandom(11);
        for (Fleet.Donor d : fleet.donors) {
            next.put(d.bankId(), new long[TP]);
        }
        Map<String, List<long[]>> warmUp = conversations(fleet, throwaway);
        ingestPass("warm-up pass (cold server, empty banks)", http, fleet, cp, next, d -> warmUp.get(d.bankId()));
        int evictions = Integer.getInteger("kvreuse.bench.ingest.warmups", 12);
        for (int w = 1; w <= evictions; w++) {
            Map<String, List<long[]>> again = conversations(fleet, throwaway);
            ingestPass(
                    "eviction warm-up " + w + " (every slot reused)",
                    http,
                    fleet,
                    cp,
                    next,
                    d -> again.get(d.bankId()));
        }
        ingestPass("measured pass (warm server, every slot reused)", http, fleet, cp, next, Fleet.Donor::chains);
    }

    /** New conversations for every donor's bank, drawn from {@code random}: one pass's worth. */
    private static Map<String, List<long[]>> conversations(Fleet fleet, SplittableRandom random) {
        Map<String, List<long[]>> byBank = new HashMap<>();
        for (Fleet.Donor d : fleet.donors) {
            List<long[]> chains = new ArrayList<>();
            for (int c = 0; c < CONVERSATIONS_PER_DONOR; c++) {
                chains.add(random.longs(CHAIN).toArray());
            }
            byBank.put(d.bankId(), chains);
        }
        return byBank;
    }

    private static void ingestPass(
            String pass,
            KvReuseClient http,
            Fleet fleet,
            ControlPlane cp,
            Map<String, long[]> nextEventIds,
            java.util.function.Function<Fleet.Donor, List<long[]>> chainsOf)
            throws Exception {
        List<Runnable> batches = new ArrayList<>();
        long blocks = 0;
        for (Fleet.Donor d : fleet.donors) {
            long[] next = nextEventIds.get(d.bankId());
            List<Map<String, Object>> all = new ArrayList<>();
            for (int c = 0; c < CONVERSATIONS_PER_DONOR; c++) {
                long[] chain = chainsOf.apply(d).get(c);
                for (int i = 0; i < CHAIN; i++) {
                    Map<String, Object> b = new LinkedHashMap<>();
                    b.put("seqHash", Long.toUnsignedString(chain[i]));
                    if (i > 0) {
                        b.put("parentHash", Long.toUnsignedString(chain[i - 1]));
                    }
                    b.put("position", i);
                    b.put("slot", c * CHAIN + i);
                    all.add(b);
                }
            }
            for (int from = 0; from < all.size(); from += BATCH) {
                List<Map<String, Object>> slice = all.subList(from, Math.min(all.size(), from + BATCH));
                for (int rank = 0; rank < TP; rank++) {
                    long eventId = ++next[rank];
                    String body = KvReuseClient.JSON.writeValueAsString(Map.of(
                            "rank",
                            rank,
                            "firstEventId",
                            eventId,
                            "events",
                            List.of(Map.of("type", "STORED", "blocks", slice))));
                    blocks += slice.size();
                    batches.add(() -> {
                        try {
                            http.send("POST", "/api/v1/banks/" + d.bankId + "/events", d.token, body, 200);
                        } catch (Exception e) {
                            throw new IllegalStateException(e);
                        }
                    });
                }
            }
        }
        // batches of one bank and rank must go in order: one worker per bank
        Map<String, List<Runnable>> byBank = new LinkedHashMap<>();
        int perBank = batches.size() / fleet.donors.size();
        for (int i = 0; i < fleet.donors.size(); i++) {
            byBank.put(fleet.donors.get(i).bankId, batches.subList(i * perBank, (i + 1) * perBank));
        }
        double[] cpuBefore = cp.cpuSeconds();
        long start = System.nanoTime();
        try (ExecutorService pool = Executors.newFixedThreadPool(8)) {
            List<Future<?>> work = new ArrayList<>();
            for (List<Runnable> ordered : byBank.values()) {
                work.add(pool.submit(() -> ordered.forEach(Runnable::run)));
            }
            for (Future<?> f : work) {
                f.get();
            }
        }
        double s = (System.nanoTime() - start) / 1e9;
        double[] cpuAfter = cp.cpuSeconds();
        System.out.printf(
                "ingestion, %s: %d block events (%d banks × %d ranks, batches of %d) durable in %.2f s = %.0f blocks/s%n",
                pass, blocks, fleet.donors.size(), TP, BATCH, s, blocks / s);
        int requests = batches.size();
        System.out.printf(
                "ingestion CPU: control plane %.2f s, PostgreSQL %.2f s (%.1f ms and %.1f ms per %d-block batch);"
                        + " the control plane's JIT compilers %.2f s of it%n",
                cpuAfter[0] - cpuBefore[0],
                cpuAfter[1] - cpuBefore[1],
                (cpuAfter[0] - cpuBefore[0]) * 1000 / requests,
                (cpuAfter[1] - cpuBefore[1]) * 1000 / requests,
                BATCH,
                cpuAfter[2] - cpuBefore[2]);
        Thread.sleep(2000); // let the index catch up before the next pass or the selections
    }

    /** A fleet of same-host donors and targets, set up through the API. */
    static final class Fleet {
        final List<Donor> donors = new ArrayList<>();
        final List<String> targets = new ArrayList<>();
        final List<List<Donor>> donorsByHost = new ArrayList<>();
        String router;

        record Donor(String token, String id, String bankId, List<long[]> chains) {}

        static Fleet build(KvReuseClient http, String operator) {
            Fleet f = new Fleet();
            FleetBuilder builder = new FleetBuilder(http.as(operator));
            f.router = builder.token("ROUTER", null);
            builder.reuseSettings(
                    Map.of("enabled", true, "maxInflightPerDonor", 100_000, "maxInflightPerTarget", 100_000));
            Map<String, Object> contract = SampleContracts.unique("bench-model");
            contract.put("tpSize", TP);
            String domain = builder.domain(contract);
            SplittableRandom random = new SplittableRandom(7);
            for (int h = 0; h < HOSTS; h++) {
                String host = "bench-host-" + h;
                List<Donor> local = new ArrayList<>();
                int gpu = 0;
                for (int d = 0; d < DONORS_PER_HOST; d++) {
                    FleetBuilder.Donor ready =
                            builder.donor(domain, host, TP, gpu, CONVERSATIONS_PER_DONOR * CHAIN, 1048576);
                    gpu += TP;
                    List<long[]> chains = new ArrayList<>();
                    for (int c = 0; c < CONVERSATIONS_PER_DONOR; c++) {
                        chains.add(random.longs(CHAIN).toArray());
                    }
                    Donor donor = new Donor(ready.token(), ready.id(), ready.bankId(), chains);
                    local.add(donor);
                    f.donors.add(donor);
                }
                f.donorsByHost.add(local);
                f.targets.add(builder.target(domain, host, TP, gpu).id());
            }
            return f;
        }

        /** A router request: a conversation held by a donor on the target's host, plus new blocks. */
        String request(SplittableRandom random) {
            int h = random.nextInt(targets.size());
            List<Donor> local = donorsByHost.get(h);
            long[] chain =
                    local.get(random.nextInt(local.size())).chains().get(random.nextInt(CONVERSATIONS_PER_DONOR));
            StringBuilder json = new StringBuilder(8192)
                    .append("{\"requestId\":\"")
                    .append(UUID.randomUUID())
                    .append("\",\"targetIncarnationId\":\"")
                    .append(targets.get(h))
                    .append("\",\"seqHashes\":[");
            for (int i = 0; i < CHAIN + 16; i++) {
                if (i > 0) {
                    json.append(',');
                }
                long hash = i < CHAIN ? chain[i] : random.nextLong();
                json.append('"').append(Long.toUnsignedString(hash)).append('"');
            }
            return json.append("],\"localPrefixBlocks\":")
                    .append(random.nextInt(64))
                    .append('}')
                    .toString();
        }
    }
}
