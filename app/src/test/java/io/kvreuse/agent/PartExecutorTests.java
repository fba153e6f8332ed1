package io.kvreuse.agent;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.protocol.PartState;
import io.kvreuse.protocol.TransferOrder;
import io.kvreuse.sim.KvPattern;
import io.kvreuse.transfer.SharedMemoryRegion;
import io.kvreuse.transfer.TransferEngine;
import io.kvreuse.transfer.TransferOptions;
import io.kvreuse.transfer.emulator.EmulatorControl;
import io.kvreuse.transfer.emulator.NixlEmulator;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The agent's part execution on the real FFM path against the NIXL emulator; no control plane needed. */
class PartExecutorTests {

    static final int BPB = 4096;
    static final int CAPACITY = 64;

    record Report(
            PartState state,
            long bytes,
            @Nullable Integer nativeStatus,
            @Nullable String detail) {}

    final String host = "host-" + UUID.randomUUID();
    final String suffix = UUID.randomUUID().toString().substring(0, 8);
    final List<Report> reports = new CopyOnWriteArrayList<>();
    final EmulatorControl emulator = NixlEmulator.control();
    final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    SharedMemoryRegion bank;
    SharedMemoryRegion destination;
    GpuAgents gpus;
    RegionImports regions;
    PartExecutor executor;
    long[] hashes = {11L, -3L, 0x7FFF_FFFF_FFFF_FFFFL, 42L};

    @BeforeEach
    void setUp() {
        emulator.reset();
        bank = SharedMemoryRegion.create("test-bank-" + suffix, (long) CAPACITY * BPB);
        destination = SharedMemoryRegion.create("test-dst-" + suffix, (long) CAPACITY * BPB);
        for (int i = 0; i < hashes.length; i++) {
            bank.write((long) (20 + i) * BPB, KvPattern.block(hashes[i], 1, BPB));
        }
        gpus = new GpuAgents(
                TransferEngine.open(TransferOptions.forNodeAgent(NixlEmulator.library())),
                host,
                List.of(new AgentProperties.Gpu(0, "GPU-a"), new AgentProperties.Gpu(1, "GPU-b")),
                ordinal -> {});
        regions = new RegionImports(List.of(new SharedMemoryImporter(), new CudaIpcImporter(List.of())));
        executor = executor(Duration.ofSeconds(5));
    }

    PartExecutor executor(Duration timeout) {
        return new PartExecutor(
                gpus,
                regions,
                (order, rank, state, bytes, us, nativeStatus, detail) ->
                        reports.add(new Report(state, bytes, nativeStatus, detail)),
                new AgentMetrics(registry),
                host,
                timeout);
    }

    @AfterEach
    void tearDown() {
        emulator.reset();
        gpus.close();
        regions.close();
        for (SharedMemoryRegion r : List.of(bank, destination)) {
            r.unlink();
            r.close();
        }
    }

    TransferOrder.Part part(String srcRef, String dstRef, int srcGpu, int dstGpu) {
        List<List<Integer>> from = List.of(List.of(20, hashes.length));
        return new TransferOrder.Part(
                1,
                new TransferOrder.Endpoint(host, srcGpu, "src", srcRef, from, BPB),
                new TransferOrder.Endpoint(host, dstGpu, "dst", dstRef, List.of(List.of(5, hashes.length)), BPB),
                from,
                (long) hashes.length * BPB);
    }

    TransferOrder.Part part() {
        return part("shm://" + bank.name(), "shm://" + destination.name(), 0, 1);
    }

    @Test
    void partMovesEveryBlockToItsDestinationSlotAndReportsRunningThenDone() {
        executor.execute(UUID.randomUUID(), part());

        assertThat(reports).extracting(Report::state).containsExactly(PartState.RUNNING, PartState.DONE);
        assertThat(reports.getLast().bytes()).isEqualTo((long) hashes.length * BPB);
        for (int i = 0; i < hashes.length; i++) {
            assertThat(KvPattern.firstMismatch(destination.read((long) (5 + i) * BPB, BPB), hashes[i], 1))
                    .as("block %d", i)
                    .isEqualTo(-1);
        }
        assertThat(destination.read(4L * BPB, BPB)).containsOnly(0);
        assertThat(destination.read((5L + hashes.length) * BPB, BPB)).containsOnly(0);
        assertThat(registry.get("kvreuse.agent.transfer.bytes").counter().count())
                .isEqualTo((double) hashes.length * BPB);
        assertThat(registry.get("kvreuse.agent.transfer.lane")
                        .tag("lane", "HOST")
                        .counter()
                        .count())
                .isEqualTo(1);
        assertThat(registry.find("kvreuse.agent.transfer.lane")
                        .tag("lane", "EMULATED")
                        .counter())
                .isNull();
    }

    @Test
    void regionsAreImportedAndRegisteredOnceForManyParts() {
        for (int i = 0; i < 3; i++) {
            executor.execute(UUID.randomUUID(), part());
        }

        assertThat(reports).filteredOn(r -> r.state() == PartState.DONE).hasSize(3);
        assertThat(regions.size()).isEqualTo(2);
    }

    @Test
    void partWhenTransferStallsPastTheDeadlineThenUncertainThenQuiescedWithoutTouchingTheDestination() {
        emulator.stallTransfers();
        long before = emulator.bytesCopied();

        executor(Duration.ofMillis(300)).execute(UUID.randomUUID(), part());

        assertThat(reports)
                .extracting(Report::state)
                .containsExactly(PartState.RUNNING, PartState.UNCERTAIN, PartState.QUIESCED);
        assertThat(reports.get(2).detail()).contains("released");
        emulator.releaseStalledTransfers();
        assertThat(emulator.bytesCopied()).isEqualTo(before);
        assertThat(destination.read(5L * BPB, hashes.length * BPB)).containsOnly(0);
    }

    @Test
    void partWhenNixlFailsTheTransferThenFailedWithTheNativeStatus() {
        emulator.failNext(
                io.kvreuse.transfer.emulator.EmulatedCall.GET_XFER_STATUS,
                io.kvreuse.transfer.emulator.NixlCoreStatus.BACKEND);

        executor.execute(UUID.randomUUID(), part());

        assertThat(reports).extracting(Report::state).containsExactly(PartState.RUNNING, PartState.FAILED);
        assertThat(reports.getLast().nativeStatus()).isNotNull().isNegative();
    }

    @Test
    void partWhenRegionDoesNotExistThenFailedBeforeRunning() {
        executor.execute(UUID.randomUUID(), part("shm://no-such-" + suffix, "shm://" + destination.name(), 0, 1));

        assertThat(reports).extracting(Report::state).containsExactly(PartState.FAILED);
        assertThat(reports.getFirst().detail()).contains("does not exist on this host");
    }

    @Test
    void partWhenGpuIsNotManagedHereThenFailedBeforeRunning() {
        executor.execute(UUID.randomUUID(), part("shm://" + bank.name(), "shm://" + destination.name(), 0, 7));

        assertThat(reports).extracting(Report::state).containsExactly(PartState.FAILED);
        assertThat(reports.getFirst().detail()).contains("GPU 7").contains("not managed");
    }

    @Test
    void partWhenRegionIsCudaIpcWithoutCudaThenFailedWithTheReason() {
        String wellFormed = "cuda-ipc://0/" + "A".repeat(86) + "?size=4096";
        executor.execute(UUID.randomUUID(), part(wellFormed, "shm://" + destination.name(), 0, 1));

        assertThat(reports).extracting(Report::state).containsExactly(PartState.FAILED);
        assertThat(reports.getFirst().detail()).contains("libcudart");
    }

    @Test
    void partWhenEngineRecreatedItsRegionThenTheNewMemoryIsImported() {
        executor.execute(UUID.randomUUID(), part());
        destination.unlink();
        destination.close();
        destination = SharedMemoryRegion.create("test-dst-" + suffix, (long) CAPACITY * BPB);
        reports.clear();

        executor.execute(UUID.randomUUID(), part());

        assertThat(reports).extracting(Report::state).containsExactly(PartState.RUNNING, PartState.DONE);
        assertThat(KvPattern.firstMismatch(destination.read(5L * BPB, BPB), hashes[0], 1))
                .isEqualTo(-1);
    }
}
