package io.kvreuse.transfer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Where NIXL is strict (progress, lanes, descriptors, imported memory) and what {@link
 * TransferEngine} does about it: the same tests run against the emulator always and against a real
 * {@code libnixl_capi.so} when one is configured. They fail on an emulator that is lenient where
 * NIXL 1.4 / UCX 1.22 were measured to be strict, and on a binding that relies on that leniency.
 */
abstract class StrictnessContractTests {

    static final int BLOCK = 4096;
    static final int BLOCKS = 16;
    static final Duration WAIT = Duration.ofSeconds(10);
    /** Long enough that a transfer that could run would have run; it must not, without progress. */
    static final Duration STARVED = Duration.ofMillis(300);

    private final List<TransferEngine> engines = new ArrayList<>();
    private final TestMemory memory = new TestMemory();
    private @Nullable GpuMemory gpu;

    protected abstract Path library();

    @AfterEach
    void closeEverything() {
        engines.forEach(TransferEngine::close);
        memory.close();
        if (gpu != null) {
            gpu.close();
        }
    }

    TransferEngine engine(TransferOptions options) {
        TransferEngine engine = TransferEngine.open(options);
        engines.add(engine);
        return engine;
    }

    record Node(NixlAgent agent, SharedMemoryRegion bank, RegisteredRegion region) {}

    Node node(TransferEngine engine, String role, int seed) {
        NixlAgent agent = engine.createAgent(role + "-" + UUID.randomUUID());
        SharedMemoryRegion bank = memory.create((long) BLOCKS * BLOCK);
        TestMemory.fillBlocks(bank, seed, BLOCKS, BLOCK);
        return new Node(agent, bank, agent.register(bank, MemoryKind.DRAM, 0));
    }

    // ---------------------------------------------------------------- progress

    @Test
    void readWhenTargetMakesNoCallsThenItsProgressThreadCompletesIt() {
        TransferEngine engine = engine(TransferOptions.of(library()));
        Node target = node(engine, "decode", 11);
        Node initiator = node(engine, "prefill", 22);
        PeerConnection peer = initiator.agent().connect(target.agent().localMetadata());

        initiator
                .agent()
                .submit(TransferRequest.read(
                        initiator.agent().localBlocks(initiator.region(), BLOCK),
                        peer.blocks(target.region().asRemote(), BLOCK),
                        List.of(new SlotRun(0, 3, 2))))
                .await(WAIT);

        assertThat(initiator.bank().read(0, BLOCK)).isEqualTo(TestMemory.pattern(11, 3, BLOCK));
        assertThat(initiator.bank().read(2L * BLOCK, BLOCK)).isEqualTo(TestMemory.pattern(22, 2, BLOCK));
    }

    @Test
    void readWhenTargetHasNoProgressThreadAndMakesNoCallsThenNothingMovesUntilItDoes() {
        TransferEngine engine = engine(TransferOptions.of(library()).withProgressThread(false));
        Node target = node(engine, "decode", 11);
        Node initiator = node(engine, "prefill", 22);
        PeerConnection peer = initiator.agent().connect(target.agent().localMetadata());
        TransferHandle handle = initiator
                .agent()
                .submit(TransferRequest.read(
                        initiator.agent().localBlocks(initiator.region(), BLOCK),
                        peer.blocks(target.region().asRemote(), BLOCK),
                        List.of(new SlotRun(0, 3, 2))));

        assertThatThrownBy(() -> handle.await(STARVED)).isInstanceOf(TransferTimeoutException.class);
        assertThat(initiator.bank().read(0, BLOCK)).isEqualTo(TestMemory.pattern(22, 0, BLOCK));

        Awaiting.until(
                () -> {
                    target.agent().takeNotifications(); // any call advances the target's worker
                    return handle.isDone();
                },
                WAIT,
                "the read once the target makes calls");
        assertThat(handle.state()).isEqualTo(TransferState.COMPLETED);
        assertThat(initiator.bank().read(0, BLOCK)).isEqualTo(TestMemory.pattern(11, 3, BLOCK));
    }

    @Test
    void notifyWhenSenderGoesIdleThenItsProgressThreadDeliversIt() {
        TransferEngine engine = engine(TransferOptions.of(library()));
        NixlAgent sender = node(engine, "decode", 1).agent();
        NixlAgent receiver = node(engine, "prefill", 2).agent();

        sender.connect(receiver.localMetadata()).notify("full-hit:7");

        assertThat(Awaiting.notifications(receiver, 1, WAIT))
                .extracting(Notification::text)
                .containsExactly("full-hit:7");
    }

    @Test
    void notifyWhenSenderHasNoProgressThreadAndGoesIdleThenNotDeliveredUntilItMakesACall() {
        TransferEngine engine = engine(TransferOptions.of(library()).withProgressThread(false));
        NixlAgent sender = node(engine, "decode", 1).agent();
        NixlAgent receiver = node(engine, "prefill", 2).agent();

        sender.connect(receiver.localMetadata()).notify("full-hit:8");

        assertThat(Awaiting.notifications(receiver, 1, STARVED)).isEmpty();
        List<Notification> received = new ArrayList<>();
        Awaiting.until(
                () -> {
                    sender.takeNotifications(); // the sender's next call sends what it generated
                    received.addAll(receiver.takeNotifications());
                    return !received.isEmpty();
                },
                WAIT,
                "the notification once the sender makes a call");
        assertThat(received).extracting(Notification::text).containsExactly("full-hit:8");
    }

    @Test
    void writeNotificationWhenInitiatorIdleAfterCompletionThenDeliveredByItsProgressThread() {
        TransferEngine engine = engine(TransferOptions.of(library()));
        Node initiator = node(engine, "decode", 5);
        Node target = node(engine, "prefill", 6);
        PeerConnection peer = initiator.agent().connect(target.agent().localMetadata());

        initiator
                .agent()
                .submit(TransferRequest.write(
                                initiator.agent().localBlocks(initiator.region(), BLOCK),
                                peer.blocks(target.region().asRemote(), BLOCK),
                                List.of(SlotRun.same(1, 2)))
                        .withNotification("req-9:1"))
                .await(WAIT);

        assertThat(Awaiting.notifications(target.agent(), 1, WAIT))
                .extracting(Notification::text)
                .containsExactly("req-9:1");
    }

    // ---------------------------------------------------------------- descriptors

    @Test
    void writeWhenRunsAreContiguousOnBothSidesThenOneDescriptorPerMergedRun() {
        for (boolean capture : new boolean[] {true, false}) {
            TransferEngine engine = engine(TransferOptions.of(library()).withCaptureTelemetry(capture));
            Node initiator = node(engine, "decode", 5);
            Node target = node(engine, "prefill", 6);
            PeerConnection peer = initiator.agent().connect(target.agent().localMetadata());
            List<SlotRun> runs = List.of(new SlotRun(0, 10, 2), new SlotRun(2, 12, 3), new SlotRun(7, 1, 1));

            TransferTelemetry telemetry = initiator
                    .agent()
                    .submit(TransferRequest.write(
                            initiator.agent().localBlocks(initiator.region(), BLOCK),
                            peer.blocks(target.region().asRemote(), BLOCK),
                            runs))
                    .await(WAIT);

            assertThat(telemetry.reportedByNixl()).isEqualTo(capture);
            assertThat(telemetry.descriptorCount())
                    .as("telemetry capture " + capture)
                    .isEqualTo(2);
            assertThat(telemetry.totalBytes()).isEqualTo(6L * BLOCK);
            for (int i = 0; i < 5; i++) {
                assertThat(target.bank().read((long) (10 + i) * BLOCK, BLOCK))
                        .isEqualTo(TestMemory.pattern(5, i, BLOCK));
            }
            assertThat(target.bank().read(BLOCK, BLOCK)).isEqualTo(TestMemory.pattern(5, 7, BLOCK));
            assertThat(target.bank().read(0, BLOCK)).isEqualTo(TestMemory.pattern(6, 0, BLOCK));
            assertThat(target.bank().read(15L * BLOCK, BLOCK)).isEqualTo(TestMemory.pattern(6, 15, BLOCK));
        }
    }

    @Test
    void loopbackWhenSixteenThousandBlocksInOneRunThenOneDescriptorAndEveryBlockMoves() {
        int blocks = 16_384;
        int block = 64;
        TransferEngine engine = engine(TransferOptions.of(library()));
        NixlAgent agent = engine.createAgent("tiers-" + UUID.randomUUID());
        SharedMemoryRegion source = memory.create((long) blocks * block);
        SharedMemoryRegion destination = memory.create((long) blocks * block);
        TestMemory.fillBlocks(source, 4, blocks, block);
        RegisteredRegion from = agent.register(source, MemoryKind.DRAM, 0);
        RegisteredRegion to = agent.register(destination, MemoryKind.DRAM, 0);

        TransferTelemetry telemetry = agent.submit(TransferRequest.read(
                        agent.localBlocks(to, block),
                        agent.loopback().blocks(from.asRemote(), block),
                        List.of(new SlotRun(0, 0, blocks - 1))))
                .await(WAIT);

        assertThat(telemetry.descriptorCount()).isEqualTo(1);
        assertThat(telemetry.totalBytes()).isEqualTo((long) (blocks - 1) * block);
        assertThat(destination.read(0, (blocks - 1) * block)).isEqualTo(source.read(0, (blocks - 1) * block));
        assertThat(destination.read((long) (blocks - 1) * block, block)).containsOnly(0);
    }

    @Test
    void submitWhenTheSameRunsAgainThenEveryPostMovesTheCurrentBytesAndNotifies() {
        TransferEngine engine = engine(TransferOptions.of(library()));
        Node initiator = node(engine, "decode", 5);
        Node target = node(engine, "prefill", 6);
        PeerConnection peer = initiator.agent().connect(target.agent().localMetadata());
        BlockSet local = initiator.agent().localBlocks(initiator.region(), BLOCK);
        BlockSet remote = peer.blocks(target.region().asRemote(), BLOCK);
        List<SlotRun> runs = List.of(new SlotRun(0, 4, 2), new SlotRun(9, 0, 1));

        for (int round = 0; round < 3; round++) {
            TestMemory.fillBlocks(initiator.bank(), 40 + round, BLOCKS, BLOCK);
            try (TransferHandle handle = initiator
                    .agent()
                    .submit(TransferRequest.write(local, remote, runs).withNotification("round-" + round))) {
                handle.await(WAIT);
            }
            assertThat(target.bank().read(4L * BLOCK, BLOCK)).isEqualTo(TestMemory.pattern(40 + round, 0, BLOCK));
            assertThat(target.bank().read(0, BLOCK)).isEqualTo(TestMemory.pattern(40 + round, 9, BLOCK));
            assertThat(Awaiting.notifications(target.agent(), 1, WAIT))
                    .extracting(Notification::text)
                    .containsExactly("round-" + round);
        }
        initiator.region().close();
        assertThat(local.isOpen()).isFalse();
        assertThatThrownBy(() -> initiator.agent().submit(TransferRequest.write(local, remote, runs)))
                .isInstanceOf(HandleClosedException.class);
    }

    // ---------------------------------------------------------------- lanes and GPU agents

    @Test
    void loopbackGpuCopyWhenErrorModePeerThenTheEmulatedLane() {
        assertLoopbackGpuCopy(TransferOptions.of(library()), TransferLane.EMULATED);
    }

    @Test
    void loopbackGpuCopyWhenNodeAgentOptionsThenTheCopyEngineLane() {
        assertLoopbackGpuCopy(TransferOptions.forNodeAgent(library()), TransferLane.CUDA_COPY);
    }

    private void assertLoopbackGpuCopy(TransferOptions options, TransferLane expected) {
        gpu = GpuMemory.forLibrary(library());
        assumeTrue(gpu != null, "GPU memory: set -D" + GpuMemory.RUNTIME_PROPERTY + " for a real NIXL");
        GpuMemory.Buffer source = gpu.allocate((long) BLOCKS * BLOCK);
        GpuMemory.Buffer destination = gpu.allocate((long) BLOCKS * BLOCK);
        for (int b = 0; b < BLOCKS; b++) {
            source.write((long) b * BLOCK, TestMemory.pattern(3, b, BLOCK));
            destination.write((long) b * BLOCK, new byte[BLOCK]);
        }
        NixlAgent agent = engine(options).createAgent("gpu0-" + UUID.randomUUID(), 0, gpu::makeCurrent);
        RegisteredRegion from = agent.register(MemoryKind.VRAM, source.address(), (long) BLOCKS * BLOCK, 0);
        RegisteredRegion to = agent.register(MemoryKind.VRAM, destination.address(), (long) BLOCKS * BLOCK, 0);

        TransferTelemetry telemetry = agent.submit(TransferRequest.read(
                        agent.localBlocks(to, BLOCK),
                        agent.loopback().blocks(from.asRemote(), BLOCK),
                        List.of(new SlotRun(4, 0, 3), new SlotRun(9, 12, 2))))
                .await(WAIT);

        assertThat(telemetry.lane()).isEqualTo(expected);
        assertThat(telemetry.descriptorCount()).isEqualTo(2);
        assertThat(destination.read(4L * BLOCK, BLOCK)).isEqualTo(TestMemory.pattern(3, 0, BLOCK));
        assertThat(destination.read(6L * BLOCK, BLOCK)).isEqualTo(TestMemory.pattern(3, 2, BLOCK));
        assertThat(destination.read(10L * BLOCK, BLOCK)).isEqualTo(TestMemory.pattern(3, 13, BLOCK));
        assertThat(destination.read(7L * BLOCK, BLOCK)).containsOnly(0);
        assertThat(destination.read(0, BLOCK)).containsOnly(0);
    }

    @Test
    void hostTransferWhenAnyErrorModeThenTheHostLane() {
        TransferEngine engine = engine(TransferOptions.of(library()));
        Node node = node(engine, "tiers", 2);

        TransferTelemetry telemetry = node.agent()
                .submit(TransferRequest.read(
                        node.agent().localBlocks(node.region(), BLOCK),
                        node.agent().loopback().blocks(node.region().asRemote(), BLOCK),
                        List.of(new SlotRun(0, 8, 1))))
                .await(WAIT);

        assertThat(telemetry.lane()).isEqualTo(TransferLane.HOST);
    }

    @Test
    void createAgentWhenTheGpuAlreadyHasAnAgentInThisProcessThenRefused() {
        TransferEngine first = engine(TransferOptions.forNodeAgent(library()));
        TransferEngine second = engine(TransferOptions.forNodeAgent(library()));
        NixlAgent agent = first.createAgent("gpu3-" + UUID.randomUUID(), 3, () -> {});

        assertThatThrownBy(() -> second.createAgent("gpu3-again-" + UUID.randomUUID(), 3, () -> {}))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("GPU 3 already has NIXL agent " + agent.name())
                .hasMessageContaining("one agent per GPU per process");
        assertThat(second.createAgent("gpu4-" + UUID.randomUUID(), 4, () -> {}).gpuOrdinal())
                .hasValue(4);

        agent.close();
        assertThat(second.createAgent("gpu3-after-" + UUID.randomUUID(), 3, () -> {})
                        .isOpen())
                .isTrue();
    }

    @Test
    void registerWhenGpuMemoryOnAHostMemoryAgentThenRefused() {
        NixlAgent agent = engine(TransferOptions.of(library())).createAgent("host-" + UUID.randomUUID());

        assertThatThrownBy(() -> agent.register(MemoryKind.VRAM, 0x7000_0000L, 4096, 0))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("host-memory agent");
        assertThat(agent.gpuOrdinal()).isEmpty();
    }

    @Test
    void gpuAgentWhenCreatedThenSetupRanFirstOnTheThreadThatMakesEveryCall() {
        AtomicReference<Thread> setupThread = new AtomicReference<>();
        NixlAgent agent = engine(TransferOptions.forNodeAgent(library()))
                .createAgent("gpu5-" + UUID.randomUUID(), 5, () -> setupThread.set(Thread.currentThread()));

        Thread callThread = agent.callOnAgentThread("probe", Thread::currentThread);

        assertThat(setupThread.get()).isNotNull().isSameAs(callThread).isNotSameAs(Thread.currentThread());
        assertThat(callThread.isVirtual()).isFalse();
    }

    @Test
    void gpuAgentWhenSetupFailsThenNoAgentAndTheGpuStaysFree() {
        TransferEngine engine = engine(TransferOptions.forNodeAgent(library()));

        assertThatThrownBy(() -> engine.createAgent("gpu6-" + UUID.randomUUID(), 6, () -> {
                    throw new IllegalStateException("cudaSetDevice(6) failed: invalid device ordinal");
                }))
                .hasMessageContaining("invalid device ordinal");
        assertThat(engine.createAgent("gpu6-" + UUID.randomUUID(), 6, () -> {}).isOpen())
                .isTrue();
    }

    @Test
    void localMetadataWhenAnImportedRegionIsRegisteredThenRefused() {
        NixlAgent agent = engine(TransferOptions.forNodeAgent(library())).createAgent("gpu7-" + UUID.randomUUID());
        byte[] before = agent.localMetadata();
        SharedMemoryRegion imported = memory.create(BLOCK);
        RegisteredRegion region = agent.registerImported(MemoryKind.DRAM, imported.address(), BLOCK, 0);

        assertThat(before).isNotEmpty();
        assertThat(region.isImported()).isTrue();
        assertThatThrownBy(agent::localMetadata)
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("imported regions");
        region.close();
        assertThat(agent.localMetadata()).isNotEmpty();
    }
}
