package io.kvreuse.transfer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The behaviour every NIXL C library must show through {@link TransferEngine}: run against the
 * emulator always, and unchanged against a real {@code libnixl_capi.so} when one is configured.
 */
abstract class TransferEngineContractTests {

    static final int BLOCK = 4096;
    static final int BLOCKS = 16;
    static final Duration WAIT = Duration.ofSeconds(10);

    TransferEngine engine;
    final TestMemory memory = new TestMemory();

    /** The library under test. */
    protected abstract Path library();

    /** A record of one agent with a registered, pattern-filled bank of {@link #BLOCKS} blocks. */
    record Node(NixlAgent agent, SharedMemoryRegion bank, RegisteredRegion region) {}

    @BeforeEach
    void openEngine() {
        engine = TransferEngine.open(TransferOptions.of(library()));
    }

    @AfterEach
    void closeEverything() {
        if (engine != null) {
            engine.close();
        }
        memory.close();
    }

    NixlAgent agent(String role) {
        return engine.createAgent(role + "-" + UUID.randomUUID());
    }

    Node node(String role, int seed) {
        NixlAgent agent = agent(role);
        SharedMemoryRegion bank = memory.create((long) BLOCKS * BLOCK);
        TestMemory.fillBlocks(bank, seed, BLOCKS, BLOCK);
        return new Node(agent, bank, agent.register(bank, MemoryKind.DRAM, 0));
    }

    static byte[] block(Node node, int block) {
        return node.bank().read((long) block * BLOCK, BLOCK);
    }

    @Test
    void createAgentWhenLibraryAvailableThenAgentIsOpenAndNamed() {
        NixlAgent agent = engine.createAgent("decode-0");

        assertThat(agent.name()).isEqualTo("decode-0");
        assertThat(agent.isOpen()).isTrue();
    }

    @Test
    void closeAgentWhenClosedTwiceThenSecondCloseDoesNothing() {
        NixlAgent agent = agent("closing");
        agent.close();
        agent.close();

        assertThat(agent.isOpen()).isFalse();
    }

    @Test
    void agentWhenClosedThenCallsThrowHandleClosed() {
        Node node = node("closed", 1);
        node.agent().close();

        assertThatThrownBy(node.agent()::localMetadata).isInstanceOf(HandleClosedException.class);
        assertThatThrownBy(
                        () -> node.agent().register(MemoryKind.DRAM, node.bank().address(), BLOCK, 0))
                .isInstanceOf(HandleClosedException.class);
        assertThat(node.region().isRegistered()).isFalse();
    }

    @Test
    void engineWhenClosedThenCreateAgentThrowsHandleClosed() {
        engine.close();

        assertThatThrownBy(() -> engine.createAgent("late")).isInstanceOf(HandleClosedException.class);
    }

    @Test
    void connectWhenPeerMetadataLoadedThenPeerNamedAfterRemoteAgent() {
        Node decode = node("decode", 1);
        Node prefill = node("prefill", 2);

        PeerConnection peer = prefill.agent().connect(decode.agent().localMetadata());

        assertThat(peer.remoteAgent()).isEqualTo(decode.agent().name());
        assertThat(peer.metadataLoaded()).isTrue();
    }

    @Test
    void connectWhenSameMetadataTwiceThenSamePeer() {
        Node decode = node("decode", 1);
        NixlAgent prefill = agent("prefill");
        byte[] metadata = decode.agent().localMetadata();

        assertThat(prefill.connect(metadata)).isSameAs(prefill.connect(metadata));
    }

    @Test
    void connectWhenOwnMetadataThenInvalidParameter() {
        Node node = node("self", 1);

        assertThatThrownBy(() -> node.agent().connect(node.agent().localMetadata()))
                .isInstanceOf(NixlInvalidParameterException.class)
                .hasMessageContaining("load_remote_md");
    }

    @Test
    void peerWhenClosedThenMetadataInvalidatedAndReconnectWorks() {
        Node decode = node("decode", 1);
        NixlAgent prefill = agent("prefill");
        PeerConnection first = prefill.connect(decode.agent().localMetadata());

        first.close();
        first.close();
        PeerConnection second = prefill.connect(decode.agent().localMetadata());

        assertThat(first.isOpen()).isFalse();
        assertThat(second).isNotSameAs(first);
        assertThat(second.metadataLoaded()).isTrue();
        assertThatThrownBy(() -> first.blocks(decode.region().asRemote(), BLOCK))
                .isInstanceOf(HandleClosedException.class);
    }

    @Test
    void loopbackWriteWhenBlocksCoveredThenBytesCopiedInsideOneAgent() {
        Node node = node("tiers", 3);
        SharedMemoryRegion hostTier = memory.create((long) BLOCKS * BLOCK);
        RegisteredRegion host = node.agent().register(hostTier, MemoryKind.DRAM, 0);
        BlockSet local = node.agent().localBlocks(node.region(), BLOCK);
        BlockSet remote = node.agent().loopback().blocks(host.asRemote(), BLOCK);

        node.agent()
                .submit(TransferRequest.write(local, remote, List.of(new SlotRun(2, 5, 3))))
                .await(WAIT);

        for (int i = 0; i < 3; i++) {
            assertThat(hostTier.read((long) (5 + i) * BLOCK, BLOCK)).isEqualTo(TestMemory.pattern(3, 2 + i, BLOCK));
        }
        assertThat(hostTier.read(4L * BLOCK, BLOCK)).containsOnly(0);
    }

    @Test
    void readWhenTwoAgentsThenRemoteBytesArriveLocally() {
        Node decode = node("decode", 11);
        Node prefill = node("prefill", 22);
        PeerConnection peer = prefill.agent().connect(decode.agent().localMetadata());
        BlockSet local = prefill.agent().localBlocks(prefill.region(), BLOCK);
        BlockSet remote = peer.blocks(decode.region().asRemote(), BLOCK);

        prefill.agent()
                .submit(TransferRequest.read(local, remote, List.of(new SlotRun(0, 8, 4))))
                .await(WAIT);

        for (int i = 0; i < 4; i++) {
            assertThat(block(prefill, i)).isEqualTo(TestMemory.pattern(11, 8 + i, BLOCK));
        }
        assertThat(block(prefill, 4)).isEqualTo(TestMemory.pattern(22, 4, BLOCK));
    }

    @Test
    void writeWhenMultipleSlotRunsThenOnlyThoseBlocksChange() {
        Node decode = node("decode", 5);
        Node prefill = node("prefill", 6);
        PeerConnection peer = decode.agent().connect(prefill.agent().localMetadata());
        BlockSet local = decode.agent().localBlocks(decode.region(), BLOCK);
        BlockSet remote = peer.blocks(prefill.region().asRemote(), BLOCK);
        List<SlotRun> runs = List.of(new SlotRun(0, 10, 2), new SlotRun(7, 1, 1), new SlotRun(12, 13, 3));

        TransferTelemetry telemetry = decode.agent()
                .submit(TransferRequest.write(local, remote, runs))
                .await(WAIT);

        assertThat(telemetry.totalBytes()).isEqualTo(6L * BLOCK);
        assertThat(block(prefill, 10)).isEqualTo(TestMemory.pattern(5, 0, BLOCK));
        assertThat(block(prefill, 11)).isEqualTo(TestMemory.pattern(5, 1, BLOCK));
        assertThat(block(prefill, 1)).isEqualTo(TestMemory.pattern(5, 7, BLOCK));
        assertThat(block(prefill, 15)).isEqualTo(TestMemory.pattern(5, 14, BLOCK));
        assertThat(block(prefill, 12)).isEqualTo(TestMemory.pattern(6, 12, BLOCK));
        assertThat(block(prefill, 0)).isEqualTo(TestMemory.pattern(6, 0, BLOCK));
    }

    @Test
    void submitOnceWhenNoPreparedListsThenRunsCopied() {
        Node decode = node("decode", 8);
        Node prefill = node("prefill", 9);
        PeerConnection peer = prefill.agent().connect(decode.agent().localMetadata());

        prefill.agent()
                .submitOnce(
                        TransferOp.READ,
                        prefill.region(),
                        peer,
                        decode.region().asRemote(),
                        BLOCK,
                        List.of(new SlotRun(3, 0, 2)))
                .await(WAIT);

        assertThat(block(prefill, 3)).isEqualTo(TestMemory.pattern(8, 0, BLOCK));
        assertThat(block(prefill, 4)).isEqualTo(TestMemory.pattern(8, 1, BLOCK));
    }

    @Test
    void transferWhenDescriptorOutsideRegistrationThenInvalidParam() {
        Node decode = node("decode", 1);
        NixlAgent prefill = agent("prefill");
        PeerConnection peer = prefill.connect(decode.agent().localMetadata());
        RemoteRegion beyond = new RemoteRegion(
                MemoryKind.DRAM,
                decode.region().address() + BLOCK,
                decode.region().length(),
                0);

        assertThatThrownBy(() -> peer.blocks(beyond, BLOCK))
                .isInstanceOf(NixlInvalidParameterException.class)
                .hasMessageContaining("prep_xfer_dlist");
    }

    @Test
    void transferWhenDevIdDiffersFromRegistrationThenInvalidParam() {
        Node decode = node("decode", 1);
        NixlAgent prefill = agent("prefill");
        PeerConnection peer = prefill.connect(decode.agent().localMetadata());
        RemoteRegion otherDevice = new RemoteRegion(
                MemoryKind.DRAM, decode.region().address(), decode.region().length(), 1);

        assertThatThrownBy(() -> peer.blocks(otherDevice, BLOCK)).isInstanceOf(NixlInvalidParameterException.class);
    }

    @Test
    void loopbackWhenRegionNotRegisteredThenInvalidParam() {
        Node node = node("tiers", 1);
        SharedMemoryRegion unregistered = memory.create(BLOCK * 4L);
        RemoteRegion region = new RemoteRegion(MemoryKind.DRAM, unregistered.address(), unregistered.size(), 0);

        assertThatThrownBy(() -> node.agent().loopback().blocks(region, BLOCK))
                .isInstanceOf(NixlInvalidParameterException.class);
    }

    @Test
    void submitWhenRunExceedsBlockSetThenInvalidParam() {
        Node node = node("tiers", 1);
        BlockSet local = node.agent().localBlocks(node.region(), BLOCK);
        BlockSet remote = node.agent().loopback().blocks(node.region().asRemote(), BLOCK);

        assertThatThrownBy(() ->
                        node.agent().submit(TransferRequest.read(local, remote, List.of(new SlotRun(14, 0, 3)))))
                .isInstanceOf(NixlInvalidParameterException.class)
                .hasMessageContaining("exceeds");
    }

    @Test
    void submitWhenBlockSizesDifferThenInvalidParam() {
        Node node = node("tiers", 1);
        BlockSet local = node.agent().localBlocks(node.region(), BLOCK);
        BlockSet remote = node.agent().loopback().blocks(node.region().asRemote(), BLOCK / 2);

        assertThatThrownBy(() -> node.agent().submit(TransferRequest.read(local, remote, List.of(SlotRun.same(0, 1)))))
                .isInstanceOf(NixlInvalidParameterException.class)
                .hasMessageContaining("block sizes differ");
    }

    @Test
    void submitWhenLocalAndRemoteSidesSwappedThenInvalidParam() {
        Node node = node("tiers", 1);
        BlockSet local = node.agent().localBlocks(node.region(), BLOCK);
        BlockSet remote = node.agent().loopback().blocks(node.region().asRemote(), BLOCK);

        assertThatThrownBy(() -> node.agent().submit(TransferRequest.read(remote, local, List.of(SlotRun.same(0, 1)))))
                .isInstanceOf(NixlInvalidParameterException.class);
    }

    @Test
    void blocksWhenPreparedTwiceThenSameBlockSetReused() {
        Node decode = node("decode", 1);
        Node prefill = node("prefill", 2);
        PeerConnection peer = prefill.agent().connect(decode.agent().localMetadata());

        assertThat(prefill.agent().localBlocks(prefill.region(), BLOCK))
                .isSameAs(prefill.agent().localBlocks(prefill.region(), BLOCK));
        assertThat(peer.blocks(decode.region().asRemote(), BLOCK))
                .isSameAs(peer.blocks(decode.region().asRemote(), BLOCK));
    }

    @Test
    void blocksWhenTenThousandDescriptorsThenPreparedOnceAndAddressable() {
        int blocks = 10_000;
        int bytesPerBlock = 64;
        NixlAgent agent = agent("wide");
        SharedMemoryRegion bank = memory.create((long) blocks * bytesPerBlock);
        TestMemory.fillBlocks(bank, 4, blocks, bytesPerBlock);
        SharedMemoryRegion copy = memory.create((long) blocks * bytesPerBlock);
        RegisteredRegion source = agent.register(bank, MemoryKind.DRAM, 0);
        RegisteredRegion target = agent.register(copy, MemoryKind.DRAM, 0);
        BlockSet local = agent.localBlocks(source, bytesPerBlock);
        BlockSet remote = agent.loopback().blocks(target.asRemote(), bytesPerBlock);

        agent.submit(TransferRequest.write(local, remote, List.of(new SlotRun(9_990, 0, 10))))
                .await(WAIT);

        assertThat(local.blockCount()).isEqualTo(blocks);
        assertThat(copy.read(9L * bytesPerBlock, bytesPerBlock)).isEqualTo(TestMemory.pattern(4, 9_999, bytesPerBlock));
    }

    @Test
    void writeWhenNotificationAttachedThenTargetReceivesItAfterCompletion() {
        Node decode = node("decode", 1);
        Node prefill = node("prefill", 2);
        PeerConnection peer = decode.agent().connect(prefill.agent().localMetadata());
        BlockSet local = decode.agent().localBlocks(decode.region(), BLOCK);
        BlockSet remote = peer.blocks(prefill.region().asRemote(), BLOCK);

        decode.agent()
                .submit(TransferRequest.write(local, remote, List.of(SlotRun.same(0, 2)))
                        .withNotification("req-42:1"))
                .await(WAIT);
        List<Notification> received = Awaiting.notifications(prefill.agent(), 1, WAIT);

        assertThat(received).singleElement().satisfies(n -> {
            assertThat(n.fromAgent()).isEqualTo(decode.agent().name());
            assertThat(n.text()).isEqualTo("req-42:1");
        });
        assertThat(decode.agent().takeNotifications()).isEmpty();
    }

    @Test
    void notifyWhenPeerConnectedThenPeerReceivesStandaloneMessage() {
        NixlAgent decode = node("decode", 1).agent();
        NixlAgent prefill = node("prefill", 2).agent();
        PeerConnection peer = decode.connect(prefill.localMetadata());

        peer.notify("full-hit:3");

        assertThat(Awaiting.notifications(prefill, 1, WAIT))
                .extracting(Notification::text)
                .containsExactly("full-hit:3");
    }

    @Test
    void completionWhenTransferFinishesThenFutureCompletesWithTelemetry() throws Exception {
        Node decode = node("decode", 1);
        Node prefill = node("prefill", 2);
        PeerConnection peer = prefill.agent().connect(decode.agent().localMetadata());
        TransferHandle handle = prefill.agent()
                .submit(TransferRequest.read(
                        prefill.agent().localBlocks(prefill.region(), BLOCK),
                        peer.blocks(decode.region().asRemote(), BLOCK),
                        List.of(SlotRun.same(0, BLOCKS))));

        TransferTelemetry telemetry = handle.completion().get(WAIT.toSeconds(), TimeUnit.SECONDS);

        assertThat(handle.state()).isEqualTo(TransferState.COMPLETED);
        assertThat(telemetry.totalBytes()).isEqualTo((long) BLOCKS * BLOCK);
        assertThat(handle.telemetry()).isEqualTo(telemetry);
        assertThat(handle.cancel()).isFalse();
    }

    @Test
    void transferHandleWhenClosedTwiceThenReleasedOnce() {
        Node node = node("tiers", 1);
        TransferHandle handle = node.agent()
                .submit(TransferRequest.read(
                        node.agent().localBlocks(node.region(), BLOCK),
                        node.agent().loopback().blocks(node.region().asRemote(), BLOCK),
                        List.of(new SlotRun(0, 8, 1))));
        handle.await(WAIT);

        handle.close();
        handle.close();

        assertThat(handle.state()).isEqualTo(TransferState.COMPLETED);
    }

    @Test
    void regionWhenDeregisteredThenItsBlockSetsClosedAndCloseIdempotent() {
        Node node = node("tiers", 1);
        BlockSet local = node.agent().localBlocks(node.region(), BLOCK);

        node.region().close();
        node.region().close();

        assertThat(node.region().isRegistered()).isFalse();
        assertThat(local.isOpen()).isFalse();
        assertThatThrownBy(() -> node.agent().localBlocks(node.region(), BLOCK))
                .isInstanceOf(HandleClosedException.class);
    }

    @Test
    void sharedRegionWhenStillRegisteredThenCloseRefused() {
        Node node = node("tiers", 1);

        assertThatThrownBy(node.bank()::close).isInstanceOf(IllegalStateException.class);
        node.region().close();
        node.bank().close();
        assertThatThrownBy(() -> node.bank().read(0, 1)).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void readAndWriteWhenPeerInAnotherProcessThenBytesAndNotificationCrossProcesses() throws Exception {
        Node prefill = node("prefill", 31);
        String childBank = "test-child-" + UUID.randomUUID();
        String childAgent = "decode-child-" + UUID.randomUUID();
        Process child = ChildJvm.start(
                PeerProcessMain.class,
                true,
                library().toString(),
                childBank,
                childAgent,
                String.valueOf(BLOCKS),
                String.valueOf(BLOCK),
                "31",
                "4",
                "3");
        try (var out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
            String[] ready = out.readLine().split(" ");
            assertThat(ready[0]).isEqualTo("READY");
            PeerConnection peer = prefill.agent().connect(Base64.getDecoder().decode(ready[1]));
            BlockSet remote = peer.blocks(
                    new RemoteRegion(MemoryKind.DRAM, Long.parseLong(ready[2]), Long.parseLong(ready[3]), 0), BLOCK);
            BlockSet local = prefill.agent().localBlocks(prefill.region(), BLOCK);

            prefill.agent()
                    .submit(TransferRequest.read(local, remote, List.of(new SlotRun(10, 0, 2))))
                    .await(WAIT);
            assertThat(block(prefill, 10)).isEqualTo(TestMemory.pattern(PeerProcessMain.CHILD_SEED, 0, BLOCK));
            assertThat(block(prefill, 11)).isEqualTo(TestMemory.pattern(PeerProcessMain.CHILD_SEED, 1, BLOCK));

            prefill.agent()
                    .submit(TransferRequest.write(local, remote, List.of(SlotRun.same(4, 3)))
                            .withNotification("wrote:3"))
                    .await(WAIT);
            assertThat(out.readLine()).isEqualTo("VERIFIED " + prefill.agent().name() + " wrote:3");
            child.getOutputStream().close();
            assertThat(child.waitFor(30, TimeUnit.SECONDS)).isTrue();
            assertThat(child.exitValue()).isZero();
        } finally {
            child.destroyForcibly();
        }
    }
}
