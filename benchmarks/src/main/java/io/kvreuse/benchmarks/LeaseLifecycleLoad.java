package io.kvreuse.benchmarks;

import io.kvreuse.testkit.KvReuseClient;
import io.kvreuse.testkit.Requests;
import io.kvreuse.testkit.SampleContracts;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import tools.jackson.databind.JsonNode;

/**
 * Drives full lease lifecycles through the REST API of a running control plane, as simulated
 * engines and agents would: selection → destination → PIN ack → order claim → part DONE → DELIVERED
 * notice → commit → UNPIN ack (lease RELEASED). Each pipeline has its own donor, target and host, so
 * pipelines only meet in the control plane and the database. Prints one line of results.
 *
 * <p>Arguments: {@code baseUrl operatorToken seconds pipelines [window [warmUpSeconds]]}. With a window
 * of 1 every report is its own request (the single-report endpoints); above 1 each pipeline keeps
 * that many leases in flight and its engines, agent and router use the batch endpoints. Lifecycles
 * of the warm-up (default 5 s, while the JIT compiles the hot paths) are not counted.
 */
public final class LeaseLifecycleLoad {

    private final KvReuseClient client;
    private final String operator;
    private final AtomicLong requests = new AtomicLong();
    /** Leases each pipeline keeps in flight together; above 1, engines and agents use the batch endpoints. */
    private int window = 1;

    private Duration warmUp = Duration.ofSeconds(5);

    private LeaseLifecycleLoad(String base, String operator) {
        this.client = new KvReuseClient(base);
        this.operator = operator;
    }

    public static void main(String[] args) throws Exception {
        LeaseLifecycleLoad load = new LeaseLifecycleLoad(args[0], args[1]);
        int seconds = Integer.parseInt(args[2]);
        int pipelines = Integer.parseInt(args[3]);
        load.window = args.length > 4 ? Integer.parseInt(args[4]) : 1;
        load.warmUp = Duration.ofSeconds(args.length > 5 ? Integer.parseInt(args[5]) : 5);
        load.run(seconds, pipelines);
    }

    private record Pipe(
            String host,
            String donor,
            String donorId,
            AtomicLong donorEpoch,
            String target,
            String targetId,
            AtomicLong targetEpoch,
            String agent,
            long agentEpoch,
            String router,
            List<String> chain) {}

    private void run(int seconds, int pipelines) throws Exception {
        settings();
        String domain = client.as(operator).certify(SampleContracts.unique("bench", 1, "GPU_CUDA_IPC"));
        List<Pipe> pipes = new ArrayList<>();
        for (int i = 0; i < pipelines; i++) {
            pipes.add(pipe(domain));
        }
        List<Thread> beats = pipes.stream()
                .map(p -> Thread.ofVirtual().start(() -> heartbeats(p)))
                .toList();
        for (Pipe p : pipes) {
            lifecycle(p, true); // warm-up: waits until every replica index knows the bank
        }
        long warmEnd = System.nanoTime() + warmUp.toNanos();
        long end = warmEnd + Duration.ofSeconds(seconds).toNanos();
        AtomicLong done = new AtomicLong();
        AtomicLong failed = new AtomicLong();
        ConcurrentLinkedQueue<Long> latencies = new ConcurrentLinkedQueue<>();
        long[] requestsAtStart = new long[1];
        List<Thread> threads = new ArrayList<>();
        for (Pipe p : pipes) {
            threads.add(Thread.ofVirtual().start(() -> {
                while (System.nanoTime() < end) {
                    long t0 = System.nanoTime();
                    int ok;
                    int tried = Math.max(window, 1);
                    try {
                        ok = window > 1 ? round(p) : lifecycle(p, false) ? 1 : 0;
                    } catch (Exception e) {
                        System.err.println(e.getMessage());
                        ok = 0;
                    }
                    if (t0 >= warmEnd) {
                        done.addAndGet(ok);
                        failed.addAndGet(tried - ok);
                        for (int i = 0; i < ok; i++) {
                            latencies.add(System.nanoTime() - t0);
                        }
                    }
                }
            }));
        }
        while (System.nanoTime() < warmEnd) {
            Thread.sleep(50);
        }
        requestsAtStart[0] = requests.get();
        for (Thread t : threads) {
            t.join();
        }
        beats.forEach(Thread::interrupt);
        long[] sorted = latencies.stream().mapToLong(Long::longValue).sorted().toArray();
        double rate = done.get() / (double) seconds;
        System.out.printf(
                "lifecycles=%d failed=%d seconds=%d pipelines=%d window=%d lifecycles_per_s=%.1f requests_per_s=%.0f p50_ms=%.1f p99_ms=%.1f%n",
                done.get(),
                failed.get(),
                seconds,
                pipelines,
                window,
                rate,
                (requests.get() - requestsAtStart[0]) / (double) seconds,
                pct(sorted, 0.50),
                pct(sorted, 0.99));
    }

    /** One lifecycle; false when the selection answered NO_HINT. */
    private boolean lifecycle(Pipe p, boolean warmUp) throws Exception {
        JsonNode selection;
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        do {
            selection = post("/api/v1/donor-selections", p.router(), selection(p), 200);
        } while (warmUp
                && !"HINT".equals(selection.get("decision").asString())
                && System.nanoTime() < deadline
                && pause());
        if (!"HINT".equals(selection.get("decision").asString())) {
            return false;
        }
        String lease = selection.get("leaseId").asString();
        post(
                "/api/v1/leases/" + lease + "/destination",
                p.target(),
                Map.of(
                        "fencingEpoch",
                        p.targetEpoch().get(),
                        "ranks",
                        List.of(Map.of("rank", 0, "regionRef", "shm://dst", "slots", List.of(List.of(0, 8))))),
                200);
        ackOne(p.donorId(), p.donor(), p.donorEpoch().get(), lease, "PIN");
        JsonNode order = first(
                () -> get("/api/v1/agents/" + p.host() + "/orders?waitMs=2000", p.agent()),
                o -> lease.equals(o.get("leaseId").asString()));
        post(
                "/api/v1/orders/" + order.get("orderId").asString() + "/parts/0",
                p.agent(),
                Map.of("state", "DONE", "bytes", 8L * 1048576, "durationUs", 900, "fencingEpoch", p.agentEpoch()),
                200);
        first(
                () -> get("/api/v1/incarnations/" + p.targetId() + "/commands?waitMs=2000", p.target()),
                c -> lease.equals(c.get("leaseId").asString())
                        && "DELIVERED".equals(c.get("type").asString()));
        post(
                "/api/v1/leases/" + lease + "/commit",
                p.target(),
                Map.of("fencingEpoch", p.targetEpoch().get(), "committedBlocks", 8),
                200);
        ackOne(p.donorId(), p.donor(), p.donorEpoch().get(), lease, "UNPIN");
        return true;
    }

    /**
     * One round of {@code window} lifecycles of a pipeline through the batch endpoints: the
     * selections (concurrent, as a router's requests arrive), then one destinations batch, one PIN
     * acks batch, the agent's orders and one parts batch, the target's DELIVERED notices and one
     * commits batch, and one UNPIN acks batch. Each lease gets its own destination slots. Answers how
     * many leases ended RELEASED.
     */
    private int round(Pipe p) throws Exception {
        List<String> leases = selections(p);
        if (leases.isEmpty()) {
            return 0;
        }
        java.util.Set<String> wanted = new java.util.HashSet<>(leases);
        List<Map<String, Object>> dests = new ArrayList<>();
        for (int i = 0; i < leases.size(); i++) {
            dests.add(Map.of(
                    "leaseId",
                    leases.get(i),
                    "ranks",
                    List.of(Map.of("rank", 0, "regionRef", "shm://dst", "slots", List.of(List.of(8 * i, 8))))));
        }
        expectAll(post(
                "/api/v1/incarnations/" + p.targetId() + "/destinations",
                p.target(),
                Map.of("fencingEpoch", p.targetEpoch().get(), "destinations", dests),
                200));
        ackAll(p, wanted, "PIN");
        List<Map<String, Object>> parts = new ArrayList<>();
        for (JsonNode o : collect(
                () -> get("/api/v1/agents/" + p.host() + "/orders?waitMs=2000", p.agent()),
                o -> wanted.contains(o.get("leaseId").asString()),
                leases.size())) {
            parts.add(Map.of(
                    "orderId",
                    o.get("orderId").asString(),
                    "rank",
                    0,
                    "state",
                    "DONE",
                    "bytes",
                    8L * 1048576,
                    "durationUs",
                    900));
        }
        expectAll(post(
                "/api/v1/agents/" + p.host() + "/parts",
                p.agent(),
                Map.of("fencingEpoch", p.agentEpoch(), "reports", parts),
                200));
        List<Map<String, Object>> commits = new ArrayList<>();
        for (JsonNode c : collect(
                () -> get("/api/v1/incarnations/" + p.targetId() + "/commands?waitMs=2000", p.target()),
                c -> wanted.contains(c.get("leaseId").asString())
                        && "DELIVERED".equals(c.get("type").asString()),
                leases.size())) {
            commits.add(Map.of("leaseId", c.get("leaseId").asString(), "committedBlocks", 8));
        }
        expectAll(post(
                "/api/v1/incarnations/" + p.targetId() + "/commits",
                p.target(),
                Map.of("fencingEpoch", p.targetEpoch().get(), "commits", commits),
                200));
        return ackAll(p, wanted, "UNPIN");
    }

    /** A router's selection of the pipeline's whole chain for its target, nothing local. */
    private static Map<String, Object> selection(Pipe p) {
        return Map.of(
                "requestId",
                UUID.randomUUID().toString(),
                "targetIncarnationId",
                p.targetId(),
                "seqHashes",
                p.chain(),
                "localPrefixBlocks",
                0,
                "deadlineMs",
                1000);
    }

    /** The round's selections in one batch request; the leases of those that answered HINT. */
    private List<String> selections(Pipe p) throws Exception {
        List<Map<String, Object>> selections = new ArrayList<>();
        for (int i = 0; i < window; i++) {
            selections.add(selection(p));
        }
        List<String> leases = new ArrayList<>();
        for (JsonNode n : post("/api/v1/donor-selections/batch", p.router(), Map.of("selections", selections), 200)
                .get("results")) {
            if ("HINT".equals(n.path("decision").asString())) {
                leases.add(n.get("leaseId").asString());
            }
        }
        return leases;
    }

    /** Acknowledges the round's commands of a type in one batch; answers how many leases it left RELEASED. */
    private int ackAll(Pipe p, java.util.Set<String> leases, String type) throws Exception {
        List<Map<String, Object>> acks = new ArrayList<>();
        for (JsonNode c : collect(
                () -> get("/api/v1/incarnations/" + p.donorId() + "/commands?waitMs=2000", p.donor()),
                c -> leases.contains(c.get("leaseId").asString())
                        && type.equals(c.get("type").asString()),
                leases.size())) {
            acks.add(Map.of("commandId", c.get("commandId").asString(), "ok", true));
        }
        JsonNode answer = post(
                "/api/v1/incarnations/" + p.donorId() + "/commands/acks",
                p.donor(),
                Map.of("fencingEpoch", p.donorEpoch().get(), "acks", acks),
                200);
        expectAll(answer);
        int released = 0;
        for (JsonNode r : answer.get("results")) {
            if ("RELEASED".equals(r.path("result").path("leaseState").asString())) {
                released++;
            }
        }
        return released;
    }

    private static void expectAll(JsonNode answer) {
        for (JsonNode r : answer.get("results")) {
            if (r.has("problem")) {
                throw new IllegalStateException("batch item refused: " + r.get("problem"));
            }
        }
    }

    /** Polls until {@code count} distinct matching items arrived (commands are handed out again until acknowledged). */
    private static List<JsonNode> collect(Call call, java.util.function.Predicate<JsonNode> match, int count)
            throws Exception {
        Map<String, JsonNode> found = new LinkedHashMap<>();
        for (int i = 0; i < 40 && found.size() < count; i++) {
            for (JsonNode n : call.get()) {
                if (match.test(n)) {
                    found.putIfAbsent((n.has("commandId") ? n.get("commandId") : n.get("orderId")).asString(), n);
                }
            }
        }
        if (found.size() < count) {
            throw new IllegalStateException("expected work did not arrive: " + found.size() + " of " + count);
        }
        return List.copyOf(found.values());
    }

    private void ackOne(String incarnation, String token, long epoch, String lease, String type) throws Exception {
        JsonNode c = first(
                () -> get("/api/v1/incarnations/" + incarnation + "/commands?waitMs=2000", token),
                n -> lease.equals(n.get("leaseId").asString())
                        && type.equals(n.get("type").asString()));
        post(
                "/api/v1/incarnations/" + incarnation + "/commands/"
                        + c.get("commandId").asString() + "/ack",
                token,
                Map.of("ok", true, "fencingEpoch", epoch),
                200);
    }

    private interface Call {
        JsonNode get() throws Exception;
    }

    private static JsonNode first(Call call, java.util.function.Predicate<JsonNode> match) throws Exception {
        for (int i = 0; i < 20; i++) {
            for (JsonNode n : call.get()) {
                if (match.test(n)) {
                    return n;
                }
            }
        }
        throw new IllegalStateException("expected work did not arrive");
    }

    private Pipe pipe(String domain) throws Exception {
        String host = "bench-" + UUID.randomUUID();
        String donor = token("ENGINE");
        String target = token("ENGINE");
        String agent = token("AGENT", host);
        String donorId = engine(donor, "DECODE", domain, host, 0);
        String targetId = engine(target, "PREFILL", domain, host, 1);
        long donorEpoch = post("/api/v1/incarnations/" + donorId + "/heartbeat", donor, Map.of(), 200)
                .get("fencingEpoch")
                .asLong();
        long targetEpoch = post("/api/v1/incarnations/" + targetId + "/heartbeat", target, Map.of(), 200)
                .get("fencingEpoch")
                .asLong();
        // destinations may name only regions the target registered
        post(
                "/api/v1/incarnations/" + targetId + "/destination-regions",
                target,
                Map.of(
                        "fencingEpoch",
                        targetEpoch,
                        "regions",
                        List.of(Map.of("rank", 0, "regionRef", "shm://dst", "capacityBlocks", 100_000_000))),
                200);
        String bank = post(
                        "/api/v1/incarnations/" + donorId + "/banks",
                        donor,
                        Requests.bank(
                                64, List.of(Map.of("rank", 0, "regionRef", "shm://bank", "bytesPerBlock", 1048576))),
                        201)
                .get("bankId")
                .asString();
        post("/api/v1/banks/" + bank + "/parts/0/ready", donor, Map.of(), 200);
        long[] hashes = Requests.randomChain(8);
        List<String> chain = Requests.hashes(hashes);
        post(
                "/api/v1/banks/" + bank + "/events",
                donor,
                Requests.events(0, 1, List.of(Requests.stored(hashes, 0))),
                200);
        long agentEpoch = post("/api/v1/agents", agent, Requests.agent(host, 2, "a"), 201)
                .get("agentEpoch")
                .asLong();
        return new Pipe(
                host,
                donor,
                donorId,
                new AtomicLong(donorEpoch),
                target,
                targetId,
                new AtomicLong(targetEpoch),
                agent,
                agentEpoch,
                token("ROUTER"),
                chain);
    }

    /** One pipeline's engines heartbeat on their own, as real engines do, so a slow one does not starve the others. */
    private void heartbeats(Pipe p) {
        while (!Thread.currentThread().isInterrupted()) {
            try {
                Thread.sleep(2_000);
                // an engine that went SUSPECT under load comes back READY at a new epoch: report with it
                p.donorEpoch()
                        .set(post("/api/v1/incarnations/" + p.donorId() + "/heartbeat", p.donor(), Map.of(), 200)
                                .get("fencingEpoch")
                                .asLong());
                p.targetEpoch()
                        .set(post("/api/v1/incarnations/" + p.targetId() + "/heartbeat", p.target(), Map.of(), 200)
                                .get("fencingEpoch")
                                .asLong());
            } catch (InterruptedException e) {
                return;
            } catch (Exception e) {
                System.err.println("heartbeat failed: " + e.getMessage());
            }
        }
    }

    private void settings() throws Exception {
        @SuppressWarnings("unchecked")
        Map<String, Object> s = KvReuseClient.JSON.convertValue(get("/api/v1/settings/reuse", operator), Map.class);
        s.remove("version");
        s.putAll(Map.of(
                "enabled",
                true,
                "minFetchBlocks",
                1,
                "minGainMs",
                0,
                "minGainRatio",
                0,
                "leaseTtlMs",
                30_000,
                "transferDeadlineMs",
                60_000,
                "abandonDeadlineMs",
                120_000,
                "maxInflightPerDonor",
                100_000,
                "maxInflightPerTarget",
                100_000));
        client.as(operator).put("/api/v1/settings/reuse", s).expect(200);
    }

    private String engine(String token, String role, String domain, String host, int gpu) throws Exception {
        return post(
                        "/api/v1/incarnations",
                        token,
                        Requests.registration(
                                role, domain, host, List.of("kv.fetch_gpu@1.0"), List.of(Requests.rank(0, gpu))),
                        201)
                .get("incarnationId")
                .asString();
    }

    private String token(String role) throws Exception {
        return token(role, null);
    }

    /** A token; an AGENT token is bound to {@code hostId}. */
    private String token(String role, String hostId) throws Exception {
        return client.as(operator).mint(role, role.toLowerCase() + "-" + UUID.randomUUID(), hostId);
    }

    private JsonNode get(String path, String token) throws Exception {
        requests.incrementAndGet();
        return client.send("GET", path, token, null, 200);
    }

    private JsonNode post(String path, String token, Object body, int expected) throws Exception {
        requests.incrementAndGet();
        return client.send("POST", path, token, body, expected);
    }

    private static boolean pause() {
        try {
            Thread.sleep(50);
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private static double pct(long[] sorted, double q) {
        return sorted.length == 0 ? 0 : sorted[(int) Math.min(sorted.length - 1, Math.floor(q * sorted.length))] / 1e6;
    }
}
