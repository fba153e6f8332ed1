package io.kvreuse.transfer.gpu;

import io.kvreuse.transfer.BlockSet;
import io.kvreuse.transfer.MemoryKind;
import io.kvreuse.transfer.NixlAgent;
import io.kvreuse.transfer.RegisteredRegion;
import io.kvreuse.transfer.SlotRun;
import io.kvreuse.transfer.TransferEngine;
import io.kvreuse.transfer.TransferHandle;
import io.kvreuse.transfer.TransferOptions;
import io.kvreuse.transfer.TransferRequest;
import io.kvreuse.transfer.TransferTelemetry;
import io.kvreuse.transfer.cuda.CudaIpc;
import io.kvreuse.transfer.emulator.NixlEmulator;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * The GPU tier (run by {@code transfer-ffm/gpu/run.sh} on a CUDA host): the node agent's transfer
 * path on real GPU memory. A stand-in engine process allocates a 1 GiB source bank and a 1 GiB
 * destination region on one GPU and exports both through CUDA IPC; this process imports them with
 * {@link CudaIpc} on the agent's own thread, registers both as VRAM on ONE GPU agent and moves
 * blocks by slot runs with a loopback READ, exactly as {@code PartExecutor} does. After each
 * scenario the engine checks every destination byte on the GPU.
 *
 * <p>What it prints, all from one run:
 *
 * <ul>
 *   <li><b>raw</b>: {@code cudaMemcpy} device to device on the same imported pointers in this
 *       process, one call per slot run, then {@code cudaDeviceSynchronize}; wall time on the caller
 *       thread ({@code System.nanoTime}).
 *   <li><b>transfer-ffm</b>: {@code TransferRequest.read} + {@code submit} + {@code await} on the
 *       caller thread, the time until the caller knows the bytes landed; {@code close} (releasing
 *       the request) is measured apart.
 *   <li><b>Java-side overhead per submit</b>: wall time on the caller thread of building the
 *       request and {@code NixlAgent.submit} returning (agent-thread hop, slot runs to descriptor
 *       indices, {@code make_xfer_req}, {@code post_xfer_req}); also that time minus the post
 *       itself as NIXL's telemetry reports it, i.e. what the binding adds before the copy is queued.
 * </ul>
 *
 * Samples of raw and transfer-ffm are interleaved so that clock or load changes hit both alike;
 * medians and p90 after a warm-up. Then the same for 64 MiB with UCX's error mode {@code peer}
 * (NIXL's default), whose lane the telemetry names.
 *
 * <p>Arguments: {@code --engine <standin_engine binary> --cudart <libcudart.so> [--device N]}. The
 * emulator is found as usual ({@code -Dkvreuse.nixl.emulator}); it must load the same libcudart
 * ({@code KVREUSE_EMU_CUDART}). Exit status 1 when any verification or scenario failed.
 */
public final class GpuTierMain {

    static final long BLOCK = 64 * 1024;
    static final int BLOCKS = 16_384;
    static final long REGION = BLOCK * BLOCKS;
    static final Duration WAIT = Duration.ofSeconds(60);

    private final CudaRuntime cuda;
    private final CudaIpc ipc;
    private final StandinEngine engine;
    private final int device;
    private int failures;
    private final List<String> notes = new ArrayList<>();

    // per phase
    private NixlAgent agent;
    private long src;
    private long dst;
    private BlockSet local;
    private BlockSet remote;

    private GpuTierMain(CudaRuntime cuda, CudaIpc ipc, StandinEngine engine, int device) {
        this.cuda = cuda;
        this.ipc = ipc;
        this.engine = engine;
        this.device = device;
    }

    public static void main(String[] args) throws Exception {
        Path engineBinary = null;
        Path cudart = null;
        int device = 0;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--engine" -> engineBinary = Path.of(args[++i]);
                case "--cudart" -> cudart = Path.of(args[++i]);
                case "--device" -> device = Integer.parseInt(args[++i]);
                default -> throw new IllegalArgumentException("unknown argument " + args[i]);
            }
        }
        if (engineBinary == null || cudart == null) {
            throw new IllegalArgumentException(
                    "usage: GpuTierMain --engine <binary> --cudart <libcudart.so> [--device N]");
        }
        CudaRuntime cuda = CudaRuntime.open(cudart);
        CudaIpc ipc = CudaIpc.open(cudart);
        Path emulator = NixlEmulator.library();
        System.out.println("# kvreuse GPU tier: transfer-ffm on the emulator's CUDA lane, GPU " + device);
        System.out.println("emulator " + emulator + ", CUDA runtime " + cudart + ", Java " + Runtime.version() + ", "
                + Runtime.getRuntime().availableProcessors() + " CPUs");
        int failures;
        try (StandinEngine engine = StandinEngine.start(engineBinary, device, REGION, REGION, BLOCK)) {
            System.out.println("stand-in engine: source " + engine.sourceBytes() + " B, destination "
                    + engine.destinationBytes() + " B, blocks of " + BLOCK + " B, exported by CUDA IPC");
            GpuTierMain tier = new GpuTierMain(cuda, ipc, engine, device);
            failures = tier.run(emulator);
        }
        System.out.println(failures == 0 ? "GPU TIER PASSED" : "GPU TIER FAILED: " + failures + " failure(s)");
        System.exit(failures == 0 ? 0 : 1);
    }

    private int run(Path emulator) {
        CudaIpc.Mapping source = null;
        CudaIpc.Mapping destination = null;
        try {
            // The node agent's configuration: UCX error mode none, NIXL's progress thread on.
            TransferOptions fast = TransferOptions.forNodeAgent(emulator);
            try (TransferEngine transfers = TransferEngine.open(fast)) {
                openAgent(transfers, "gpu-tier-" + device, fast);
                // Imported once, on the first agent's thread with its device current; the mappings
                // belong to the process and serve the second phase's agent too.
                source =
                        agent.callOnAgentThread("import source", () -> ipc.importHandle(device, engine.sourceHandle()));
                destination = agent.callOnAgentThread(
                        "import destination", () -> ipc.importHandle(device, engine.destinationHandle()));
                prepare(source.address(), destination.address());
                fastPhase();
                agent.close();
            }
            TransferOptions peer =
                    TransferOptions.forNodeAgent(emulator).withBackendParam(TransferOptions.UCX_ERROR_MODE, "peer");
            try (TransferEngine transfers = TransferEngine.open(peer)) {
                openAgent(transfers, "gpu-tier-peer-" + device, peer);
                prepare(source.address(), destination.address());
                peerPhase();
                agent.close();
            }
        } catch (RuntimeException e) {
            fail("setup", e);
        } finally {
            close(source);
            close(destination);
        }
        return failures;
    }

    private void openAgent(TransferEngine transfers, String name, TransferOptions options) {
        agent = transfers.createAgent(name, device, () -> ipc.setDevice(device));
        System.out.println();
        System.out.println("## agent " + name + ": UCX error mode " + options.ucxErrorMode() + ", progress thread "
                + options.progressThread() + ", progress interval "
                + options.progressInterval().toNanos() / 1000
                + " us, spin window " + options.spinWindow().toNanos() / 1000 + " us");
    }

    private void prepare(long sourceAddress, long destinationAddress) {
        RegisteredRegion from = agent.registerImported(MemoryKind.VRAM, sourceAddress, REGION, device);
        RegisteredRegion to = agent.registerImported(MemoryKind.VRAM, destinationAddress, REGION, device);
        src = sourceAddress;
        dst = destinationAddress;
        local = agent.localBlocks(to, BLOCK);
        remote = agent.loopback().blocks(from.asRemote(), BLOCK);
    }

    private void fastPhase() {
        System.out.println();
        System.out.println("### raw cudaMemcpy D2D vs transfer-ffm (loopback READ, one request)");
        System.out.println();
        header();
        compare("1 GiB: 16,384 x 64 KiB, one slot run", List.of(SlotRun.same(0, BLOCKS)), 20, 200);
        List<SlotRun> sixteen = scattered(16, 1009, 613);
        compare("16 scattered 64 KiB blocks, 16 runs", sixteen, 50, 1000);
        printNotes();
        checkerSelfTest(sixteen);
        System.out.println();
        System.out.println("### Java-side overhead per submit");
        System.out.println();
        System.out.println("submit = TransferRequest.read(...) + NixlAgent.submit(...) returning, on the caller thread"
                + " (agent-thread hop, slot runs to descriptor indices, make_xfer_req, post_xfer_req);"
                + " beyond post = submit minus the post call as NIXL's telemetry reports it (1 us resolution),"
                + " i.e. everything before the copies are queued. Contiguous: one slot run of N blocks;"
                + " scattered: N single-block runs that merge nowhere. Per extra run = (scattered - contiguous)"
                + " beyond-post medians / (N - 1). Medians (p90).");
        System.out.println();
        System.out.println("| blocks | contiguous submit | contiguous beyond post | scattered submit"
                + " | scattered beyond post | per extra run | descriptors | lane | verify |");
        System.out.println("|---|---|---|---|---|---|---|---|---|");
        for (int blocks : new int[] {1, 16, 1024, BLOCKS}) {
            overhead(blocks);
        }
    }

    private void peerPhase() {
        System.out.println();
        System.out.println("### error mode peer (NIXL's default): raw vs transfer-ffm, 64 MiB");
        System.out.println();
        header();
        compare("64 MiB: 1,024 x 64 KiB, one slot run", List.of(SlotRun.same(0, 1024)), 2, 10);
        compare("16 scattered 64 KiB blocks, 16 runs", scattered(16, 1009, 613), 2, 20);
        printNotes();
    }

    private void printNotes() {
        System.out.println();
        System.out.println("Where the transfer-ffm time goes (medians): submit = request + submit() returning"
                + " (of it, NIXL's post call per telemetry); NIXL = post until NIXL saw completion (telemetry);"
                + " await = submit start until await() returned; spin = the same with the caller spinning on"
                + " isDone() instead of parking in await().");
        System.out.println();
        notes.forEach(System.out::println);
        notes.clear();
    }

    /** The engine's check must reject a layout the destination does not hold (source blocks off by one). */
    private void checkerSelfTest(List<SlotRun> written) {
        List<SlotRun> wrong = written.stream()
                .map(r -> new SlotRun(r.localBlock(), (r.remoteBlock() + 1) % BLOCKS, r.blockCount()))
                .toList();
        String answer = engine.verify(wrong);
        boolean ok = answer.startsWith("MISMATCH");
        System.out.println();
        System.out.println(
                "checker self-test, a wrong layout must be rejected: " + answer + (ok ? " (as it must)" : " FAILED"));
        if (!ok) {
            failures++;
        }
    }

    /** {@code n} single-block runs, source block i*srcStep+7 to destination i*dstStep+101 (mod the region). */
    private static List<SlotRun> scattered(int n, int srcStep, int dstStep) {
        List<SlotRun> runs = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            runs.add(new SlotRun(
                    (int) ((101L + (long) i * dstStep) % BLOCKS), (int) ((7L + (long) i * srcStep) % BLOCKS), 1));
        }
        return runs;
    }

    private static void header() {
        System.out.println("| scenario | raw median | raw p90 | transfer-ffm median | transfer-ffm p90 | ratio (median)"
                + " | % of raw bandwidth | close median | descriptors | lane | verify |");
        System.out.println("|---|---|---|---|---|---|---|---|---|---|---|");
    }

    private void compare(String name, List<SlotRun> runs, int warmup, int samples) {
        try {
            long bytes = runs.stream().mapToLong(SlotRun::blockCount).sum() * BLOCK;
            StringBuilder checks = new StringBuilder();
            // the destination starts zeroed; the transfer-ffm path alone then writes it
            engine.zero();
            boolean ok = check(name + " (zeroed)", engine.verify(List.of()), checks);
            Sample first = transfer(runs);
            ok &= check(name + " (transfer-ffm)", engine.verify(runs), checks);
            engine.zero();
            raw(runs);
            ok &= check(name + " (raw)", engine.verify(runs), checks);
            for (int i = 0; i < warmup; i++) {
                raw(runs);
                transfer(runs);
            }
            long[] rawNs = new long[samples];
            long[] ffmNs = new long[samples];
            long[] closeNs = new long[samples];
            long[] interleavedNixlNs = new long[samples];
            long[] interleavedSubmitNs = new long[samples];
            for (int i = 0; i < samples; i++) {
                rawNs[i] = raw(runs);
                Sample s = transfer(runs);
                ffmNs[i] = s.awaitedNs;
                closeNs[i] = s.closeNs;
                interleavedNixlNs[i] = s.telemetry.transferDuration().toNanos();
                interleavedSubmitNs[i] = s.submitNs;
            }
            long[] submitNs = new long[samples];
            long[] postNs = new long[samples];
            long[] nixlNs = new long[samples];
            long[] spinNs = new long[samples];
            for (int i = 0; i < samples; i++) {
                Sample s = transfer(runs);
                submitNs[i] = s.submitNs;
                postNs[i] = s.telemetry.postDuration().toNanos();
                nixlNs[i] = s.telemetry.transferDuration().toNanos();
                spinNs[i] = spinningTransfer(runs);
            }
            notes.add("- " + name + ", interleaved with raw (the ratio's samples): submit "
                    + time(median(interleavedSubmitNs)) + ", NIXL " + time(median(interleavedNixlNs)) + ", await "
                    + time(median(ffmNs)));
            notes.add("- " + name + ", back to back without raw: submit " + time(median(submitNs)) + " (post "
                    + time(median(postNs))
                    + "), NIXL " + time(median(nixlNs)) + ", await " + time(median(ffmNs)) + ", spin "
                    + time(median(spinNs)) + "; raw " + time(median(rawNs)));
            ok &= check(name + " (after all samples)", engine.verify(runs), checks);
            long rawMedian = median(rawNs);
            long ffmMedian = median(ffmNs);
            System.out.printf(
                    Locale.ROOT,
                    "| %s | %s (%.0f GB/s) | %s | %s (%.0f GB/s) | %s | %.2f x | %.1f %% | %s | %d | %s | %s |%n",
                    name,
                    time(rawMedian),
                    bytes / (double) rawMedian,
                    time(p90(rawNs)),
                    time(ffmMedian),
                    bytes / (double) ffmMedian,
                    time(p90(ffmNs)),
                    ffmMedian / (double) rawMedian,
                    100.0 * rawMedian / ffmMedian,
                    time(median(closeNs)),
                    first.telemetry.descriptorCount(),
                    first.telemetry.lane(),
                    ok ? "OK " + samples + "+" + warmup + " samples" : "FAILED" + checks);
        } catch (RuntimeException e) {
            fail(name, e);
        }
    }

    private void overhead(int blocks) {
        try {
            Overhead contiguous = overhead(List.of(SlotRun.same(0, blocks)));
            Overhead scattered = overhead(scattered(blocks, 1, 5));
            String perRun = blocks == 1
                    ? "-"
                    : String.format(
                            Locale.ROOT,
                            "%.1f ns",
                            (scattered.beyondPost[0] - contiguous.beyondPost[0]) / (double) (blocks - 1));
            String verified = contiguous.verify.startsWith("OK") && scattered.verify.startsWith("OK")
                    ? "OK"
                    : "FAILED " + contiguous.verify + " / " + scattered.verify;
            System.out.printf(
                    Locale.ROOT,
                    "| %d | %s (%s) | %s (%s) | %s (%s) | %s (%s) | %s | %d / %d | %s | %s |%n",
                    blocks,
                    time(contiguous.submit[0]),
                    time(contiguous.submit[1]),
                    time(contiguous.beyondPost[0]),
                    time(contiguous.beyondPost[1]),
                    time(scattered.submit[0]),
                    time(scattered.submit[1]),
                    time(scattered.beyondPost[0]),
                    time(scattered.beyondPost[1]),
                    perRun,
                    contiguous.descriptors,
                    scattered.descriptors,
                    scattered.lane,
                    verified);
        } catch (RuntimeException e) {
            fail(blocks + " blocks (overhead)", e);
        }
    }

    /** Medians and p90 ({@code [median, p90]}) of submit and of submit beyond the post call. */
    private record Overhead(long[] submit, long[] beyondPost, long descriptors, Object lane, String verify) {}

    private Overhead overhead(List<SlotRun> runs) {
        engine.zero();
        boolean large = runs.size() >= 1024;
        int warmup = large ? 5 : 50;
        int samples = large ? 50 : 300;
        for (int i = 0; i < warmup; i++) {
            transfer(runs);
        }
        long[] submitNs = new long[samples];
        long[] beyondPostNs = new long[samples];
        Sample last = null;
        for (int i = 0; i < samples; i++) {
            last = transfer(runs);
            submitNs[i] = last.submitNs;
            beyondPostNs[i] =
                    Math.max(0, last.submitNs - last.telemetry.postDuration().toNanos());
        }
        String verify = engine.verify(runs);
        if (!verify.startsWith("OK")) {
            failures++;
            System.out.println("VERIFY FAILED " + runs.size() + " runs: " + verify);
        }
        return new Overhead(
                new long[] {median(submitNs), p90(submitNs)},
                new long[] {median(beyondPostNs), p90(beyondPostNs)},
                last.telemetry.descriptorCount(),
                last.telemetry.lane(),
                verify);
    }

    private record Sample(long submitNs, long awaitedNs, long closeNs, TransferTelemetry telemetry) {}

    /** One loopback READ of the runs, the node agent's way: remote = source bank, local = destination. */
    private Sample transfer(List<SlotRun> runs) {
        long start = System.nanoTime();
        TransferHandle handle = agent.submit(TransferRequest.read(local, remote, runs));
        long submitted = System.nanoTime();
        TransferTelemetry telemetry;
        long awaited;
        try {
            telemetry = handle.await(WAIT);
            awaited = System.nanoTime();
        } catch (RuntimeException e) {
            handle.close(); // released only once NIXL lets go of it
            throw e;
        }
        handle.close();
        long closed = System.nanoTime();
        return new Sample(submitted - start, awaited - start, closed - awaited, telemetry);
    }

    /** A transfer whose caller spins on isDone() rather than parking in await(): no wake-up latency. */
    private long spinningTransfer(List<SlotRun> runs) {
        long start = System.nanoTime();
        try (TransferHandle handle = agent.submit(TransferRequest.read(local, remote, runs))) {
            while (!handle.isDone()) {
                Thread.onSpinWait();
            }
            long done = System.nanoTime();
            handle.await(WAIT); // rethrows a failure
            return done - start;
        }
    }

    /** The baseline: one cudaMemcpy per run on the same pointers, then wait for the device. */
    private long raw(List<SlotRun> runs) {
        long start = System.nanoTime();
        for (SlotRun run : runs) {
            cuda.memcpy(dst + run.localBlock() * BLOCK, src + run.remoteBlock() * BLOCK, run.blockCount() * BLOCK);
        }
        cuda.synchronize();
        return System.nanoTime() - start;
    }

    private boolean check(String what, String answer, StringBuilder checks) {
        if (answer.startsWith("OK")) {
            return true;
        }
        failures++;
        checks.append(' ').append(what).append(": ").append(answer);
        System.out.println("VERIFY FAILED " + what + ": " + answer);
        return false;
    }

    private void fail(String what, RuntimeException e) {
        failures++;
        System.out.println("FAILED " + what + ": " + e);
        e.printStackTrace(System.out);
    }

    private static void close(CudaIpc.Mapping mapping) {
        if (mapping != null) {
            mapping.close();
        }
    }

    private static long median(long[] values) {
        long[] sorted = values.clone();
        Arrays.sort(sorted);
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }

    private static long p90(long[] values) {
        long[] sorted = values.clone();
        Arrays.sort(sorted);
        return sorted[(int) Math.ceil(0.9 * sorted.length) - 1];
    }

    private static String time(long nanos) {
        if (nanos >= 10_000_000) {
            return String.format(Locale.ROOT, "%.1f ms", nanos / 1e6);
        }
        if (nanos >= 10_000) {
            return String.format(Locale.ROOT, "%.0f us", nanos / 1e3);
        }
        return String.format(Locale.ROOT, "%.1f us", nanos / 1e3);
    }
}
