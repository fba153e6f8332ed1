package io.kvreuse.transfer;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import io.kvreuse.transfer.emulator.EmulatorControl;
import io.kvreuse.transfer.emulator.NixlEmulator;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import java.util.function.LongSupplier;

/**
 * Hand-written benchmark (not a test): bandwidth of FFM-driven emulator transfers against a plain
 * memcpy in the same C code, and the per-descriptor and per-transfer cost of the bindings. Each
 * measurement warms up first and reports the median of its repetitions. Run with
 * {@code transfer-ffm/bench.sh}.
 */
public final class TransferBenchmark {

    static final int BLOCKS = 1024;
    static final int BLOCK = 256 * 1024;
    static final long REGION = (long) BLOCKS * BLOCK;
    static final int WARMUP = 3;
    static final int RUNS = 15;
    static final int DESCRIPTORS = 10_000;
    static final Duration WAIT = Duration.ofSeconds(30);

    private TransferBenchmark() {}

    public static void main(String[] args) {
        EmulatorControl control = NixlEmulator.control();
        TestMemory memory = new TestMemory();
        try (TransferEngine engine = TransferEngine.open(TransferOptions.of(NixlEmulator.library()))) {
            bandwidth(engine, control, memory);
            descriptorCost(engine);
            transferCost(engine, memory);
            submitOverhead(engine, memory);
        } finally {
            memory.close();
        }
    }

    private static void bandwidth(TransferEngine engine, EmulatorControl control, TestMemory memory) {
        SharedMemoryRegion source = memory.create(REGION);
        SharedMemoryRegion target = memory.create(REGION);
        source.fill(0, REGION, (byte) 1);
        target.fill(0, REGION, (byte) 2);
        NixlAgent agent = engine.createAgent("bench-" + UUID.randomUUID());
        BlockSet local = agent.localBlocks(agent.register(source, MemoryKind.DRAM, 0), BLOCK);
        BlockSet remote = agent.loopback()
                .blocks(agent.register(target, MemoryKind.DRAM, 0).asRemote(), BLOCK);
        List<SlotRun> contiguous = List.of(SlotRun.same(0, BLOCKS));
        List<SlotRun> scattered = scattered();

        // Interleaved per sample, so noise from other work on the (shared) machine hits all three alike.
        long[][] samples = interleaved(
                () -> control.benchMemcpy(target.address(), source.address(), REGION, 1)
                        .toNanos(),
                () -> timeTransfer(agent, TransferRequest.write(local, remote, contiguous)),
                () -> timeTransfer(agent, TransferRequest.write(local, remote, scattered)));
        System.out.println("## Bandwidth: " + BLOCKS + " blocks x " + BLOCK / 1024 + " KiB = " + (REGION >> 20)
                + " MiB per transfer, " + RUNS + " interleaved samples (load average " + loadAverage() + ")");
        System.out.println();
        System.out.println("| what | best | best GiB/s | best vs memcpy | median | median vs memcpy |");
        System.out.println("|---|---|---|---|---|---|");
        row("plain memcpy in emulator C code", samples[0], samples[0]);
        row("engine WRITE, one run of 1024 blocks (merged into one copy)", samples[1], samples[0]);
        row("engine WRITE, 1024 single-block runs, permuted (1024 copies)", samples[2], samples[0]);
        agent.close();
    }

    /** Block i goes to slot (i * 389) mod 1024: no two neighbours stay adjacent, so nothing merges. */
    private static List<SlotRun> scattered() {
        List<SlotRun> runs = new ArrayList<>(BLOCKS);
        for (int i = 0; i < BLOCKS; i++) {
            runs.add(new SlotRun(i, (i * 389) % BLOCKS, 1));
        }
        return runs;
    }

    private static long timeTransfer(NixlAgent agent, TransferRequest request) {
        long start = System.nanoTime();
        try (TransferHandle handle = agent.submit(request)) {
            handle.await(WAIT);
        }
        return System.nanoTime() - start;
    }

    private static void row(String what, long[] samples, long[] memcpySamples) {
        double best = Arrays.stream(samples).min().orElseThrow();
        double bestMemcpy = Arrays.stream(memcpySamples).min().orElseThrow();
        double median = median(samples);
        System.out.printf(
                "| %s | %.2f ms | %.2f | %.1f%% | %.2f ms | %.1f%% |%n",
                what,
                best / 1e6,
                REGION / (best / 1e9) / (1L << 30),
                100 * bestMemcpy / best,
                median / 1e6,
                100 * median(memcpySamples) / median);
    }

    private static String loadAverage() {
        try {
            return Files.readString(Path.of("/proc/loadavg")).trim();
        } catch (IOException e) {
            return "unknown";
        }
    }

    private static void descriptorCost(TransferEngine engine) {
        NixlAgent agent = engine.createAgent("bench-descriptors-" + UUID.randomUUID());
        NixlCapi capi = agent.context().capi;
        BlockGeometry geometry = BlockGeometry.of(MemoryKind.DRAM, 1L << 40, (long) DESCRIPTORS * 64, 0, 64);
        double build = median(() -> {
            try (Arena temp = Arena.ofConfined()) {
                long start = System.nanoTime();
                MemorySegment list = Descriptors.blockList(capi, temp, geometry);
                long elapsed = System.nanoTime() - start;
                capi.destroyXferDlist(list);
                return elapsed;
            }
        });
        SharedMemoryRegion bank = SharedMemoryRegion.create("bench-" + UUID.randomUUID(), (long) DESCRIPTORS * 64);
        RegisteredRegion region = agent.register(bank, MemoryKind.DRAM, 0);
        long start = System.nanoTime();
        BlockSet prepared = agent.localBlocks(region, 64);
        long prepare = System.nanoTime() - start;
        double reuse = median(() -> {
            long begin = System.nanoTime();
            agent.localBlocks(region, 64);
            return System.nanoTime() - begin;
        });
        BlockSet reused = agent.localBlocks(region, 64);
        System.out.println();
        System.out.println("## Descriptor lists: " + DESCRIPTORS + " descriptors");
        System.out.println();
        System.out.println("| what | cost |");
        System.out.println("|---|---|");
        System.out.printf(
                "| xfer_dlist_add_desc downcall (list build, median of %d) | %.1f ns per descriptor |%n",
                RUNS, build / DESCRIPTORS);
        System.out.printf(
                "| first localBlocks(): build + prep_xfer_dlist, via the agent thread | %.2f ms |%n", prepare / 1e6);
        System.out.printf(
                "| later localBlocks(): cached %s | %.1f µs |%n",
                prepared == reused ? "(same set)" : "(NEW SET!)", reuse / 1e3);
        agent.close();
        bank.close();
        bank.unlink();
    }

    private static void transferCost(TransferEngine engine, TestMemory memory) {
        NixlAgent agent = engine.createAgent("bench-transfers-" + UUID.randomUUID());
        SharedMemoryRegion bank = memory.create((long) DESCRIPTORS * 64 * 2);
        RegisteredRegion region = agent.register(bank, MemoryKind.DRAM, 0);
        BlockSet local = agent.localBlocks(region, 64);
        BlockSet remote = agent.loopback().blocks(region.asRemote(), 64);
        TransferRequest one = TransferRequest.write(local, remote, List.of(new SlotRun(1, DESCRIPTORS + 1, 1)));
        int iterations = 2_000;
        double rawMake =
                agent.context().thread.call("bench", () -> rawMakeRelease(agent, local, remote, iterations, 1));
        double rawMakeWide =
                agent.context().thread.call("bench", () -> rawMakeRelease(agent, local, remote, 200, 1_000));
        double rawCycle = agent.context().thread.call("bench", () -> rawFullCycle(agent, local, remote, iterations));
        double engineCycle = median(() -> {
            long start = System.nanoTime();
            for (int i = 0; i < 200; i++) {
                timeTransfer(agent, one);
            }
            return (System.nanoTime() - start) / 200;
        });
        System.out.println();
        System.out.println("## Per-transfer cost, " + DESCRIPTORS + "-descriptor lists prepared once and reused");
        System.out.println();
        System.out.println("| what | cost |");
        System.out.println("|---|---|");
        System.out.printf(
                "| raw make_xfer_req(1 index) + release + destroy (3 downcalls) | %.0f ns per transfer |%n", rawMake);
        System.out.printf(
                "| raw make_xfer_req(1,000 indices) + release + destroy | %.1f ns per index |%n", rawMakeWide / 1_000);
        System.out.printf(
                "| raw make + post + poll to SUCCESS + release + destroy, 64 B | %.0f ns per transfer |%n", rawCycle);
        System.out.printf(
                "| engine submit + await + close from a caller thread, 64 B | %.0f ns per transfer |%n", engineCycle);
        agent.close();
    }

    /**
     * Time inside {@code submit} on the caller's thread: the hop to the agent thread, the index
     * arrays, {@code make_xfer_req} (or a kept request), {@code post} and the hop back. The
     * emulator's own share (its make copies and merges one entry per index, its post queues the
     * request) is included, so this bounds the Java side from above.
     */
    private static void submitOverhead(TransferEngine engine, TestMemory memory) {
        int maxBlocks = 16_384;
        int slots = 2 * maxBlocks + 32;
        int block = 4096;
        SharedMemoryRegion source = memory.create((long) slots * block);
        SharedMemoryRegion target = memory.create((long) slots * block);
        NixlAgent agent = engine.createAgent("bench-submit-" + UUID.randomUUID());
        BlockSet local = agent.localBlocks(agent.register(source, MemoryKind.DRAM, 0), block);
        BlockSet remote = agent.loopback()
                .blocks(agent.register(target, MemoryKind.DRAM, 0).asRemote(), block);
        System.out.println();
        System.out.println("## Submit overhead on the caller thread (EMULATOR figures; 4 KiB blocks, median of " + RUNS
                + ", load average " + loadAverage() + ")");
        System.out.println();
        System.out.println("| blocks | runs | fresh request (make_xfer_req) | kept request (repost) | per run, fresh"
                + " | Java per-run work alone (validate + index arrays) |");
        System.out.println("|---|---|---|---|---|---|");
        for (int blocks : new int[] {1, 16, 1024, 16_384}) {
            for (boolean scattered : new boolean[] {false, true}) {
                if (blocks == 1 && scattered) {
                    continue;
                }
                int spacing = scattered ? 1 : blocks;
                // runs of one block at every other slot never merge; 20 shifted variants defeat the kept-request cache
                List<List<SlotRun>> variants = new ArrayList<>();
                for (int v = 0; v < 20; v++) {
                    List<SlotRun> runs = new ArrayList<>();
                    for (int b = 0; b < blocks; b += spacing) {
                        int at = scattered ? 2 * b + v : v;
                        runs.add(new SlotRun(at, at, spacing));
                    }
                    variants.add(List.copyOf(runs)); // immutable: a repeat of the same list can reuse its request
                }
                int[] next = {0};
                for (int warm = 0; warm < 200; warm++) { // let the JIT compile the submit path first
                    timeSubmit(agent, TransferRequest.write(local, remote, variants.get(warm % variants.size())));
                }
                double fresh = median(() -> timeSubmit(
                        agent, TransferRequest.write(local, remote, variants.get(next[0]++ % variants.size()))));
                List<SlotRun> same = variants.getFirst();
                double kept = median(() -> timeSubmit(agent, TransferRequest.write(local, remote, same)));
                int runs = same.size();
                double indexWork = median(() -> timeIndexWork(agent, TransferRequest.write(local, remote, same)));
                System.out.printf(
                        "| %d | %d | %.1f µs | %.1f µs | %.1f ns | %.1f ns |%n",
                        blocks, runs, fresh / 1e3, kept / 1e3, fresh / runs, indexWork / runs);
            }
        }
        agent.close();
    }

    /** The per-run Java work of a submit, without thread hops or native calls: check and build indices. */
    private static long timeIndexWork(NixlAgent agent, TransferRequest request) {
        MemorySegment[] out = INDEX_SCRATCH;
        long start = System.nanoTime();
        TransferRequests.Shape shape = TransferRequests.validate(agent.context(), request);
        if (out[0].byteSize() < 4L * shape.pieces()) {
            out[0] = Arena.ofAuto().allocate(4L * shape.pieces());
            out[1] = Arena.ofAuto().allocate(4L * shape.pieces());
            start = System.nanoTime();
            TransferRequests.validate(agent.context(), request);
        }
        TransferRequests.fillIndices(
                request.runs(), request.local().geometry(), request.remote().geometry(), out[0], out[1]);
        return System.nanoTime() - start;
    }

    private static final MemorySegment[] INDEX_SCRATCH = {MemorySegment.NULL, MemorySegment.NULL};

    private static long timeSubmit(NixlAgent agent, TransferRequest request) {
        long start = System.nanoTime();
        TransferHandle handle = agent.submit(request);
        long elapsed = System.nanoTime() - start;
        handle.await(WAIT);
        handle.close();
        return elapsed;
    }

    /** Runs on the agent thread, as all native calls must; returns median ns per make/release/destroy. */
    private static double rawMakeRelease(NixlAgent agent, BlockSet local, BlockSet remote, int iterations, int width) {
        AgentContext ctx = agent.context();
        int[] indices = new int[width];
        Arrays.setAll(indices, i -> i);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment localIdx = arena.allocateFrom(JAVA_INT, indices);
            MemorySegment remoteIdx = arena.allocateFrom(JAVA_INT, indices);
            MemorySegment out = arena.allocate(ADDRESS);
            MemorySegment agentPtr = ctx.agent("bench");
            MemorySegment l = local.handle().pointer("bench");
            MemorySegment r = remote.handle().pointer("bench");
            return median(() -> {
                long start = System.nanoTime();
                for (int i = 0; i < iterations; i++) {
                    ctx.capi.makeXferReq(agentPtr, 1, l, localIdx, width, r, remoteIdx, width, out, MemorySegment.NULL);
                    MemorySegment request = out.get(ADDRESS, 0);
                    ctx.capi.releaseXferReq(agentPtr, request);
                    ctx.capi.destroyXferReq(request);
                }
                return (System.nanoTime() - start) / iterations;
            });
        }
    }

    private static double rawFullCycle(NixlAgent agent, BlockSet local, BlockSet remote, int iterations) {
        AgentContext ctx = agent.context();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment localIdx = arena.allocateFrom(JAVA_INT, 1);
            MemorySegment remoteIdx = arena.allocateFrom(JAVA_INT, DESCRIPTORS + 1);
            MemorySegment out = arena.allocate(ADDRESS);
            MemorySegment agentPtr = ctx.agent("bench");
            MemorySegment l = local.handle().pointer("bench");
            MemorySegment r = remote.handle().pointer("bench");
            return median(() -> {
                long start = System.nanoTime();
                for (int i = 0; i < iterations; i++) {
                    ctx.capi.makeXferReq(agentPtr, 1, l, localIdx, 1, r, remoteIdx, 1, out, MemorySegment.NULL);
                    MemorySegment request = out.get(ADDRESS, 0);
                    ctx.capi.postXferReq(agentPtr, request, MemorySegment.NULL);
                    while (ctx.capi.getXferStatus(agentPtr, request) == NixlStatus.IN_PROG) {
                        Thread.onSpinWait();
                    }
                    ctx.capi.releaseXferReq(agentPtr, request);
                    ctx.capi.destroyXferReq(request);
                }
                return (System.nanoTime() - start) / iterations;
            });
        }
    }

    private static double median(LongSupplier measurement) {
        return median(interleaved(measurement)[0]);
    }

    private static long[][] interleaved(LongSupplier... measurements) {
        long[][] samples = new long[measurements.length][RUNS];
        for (int run = -WARMUP; run < RUNS; run++) {
            for (int m = 0; m < measurements.length; m++) {
                long nanos = measurements[m].getAsLong();
                if (run >= 0) {
                    samples[m][run] = nanos;
                }
            }
        }
        return samples;
    }

    private static double median(long[] samples) {
        long[] sorted = samples.clone();
        Arrays.sort(sorted);
        return sorted[sorted.length / 2];
    }
}
