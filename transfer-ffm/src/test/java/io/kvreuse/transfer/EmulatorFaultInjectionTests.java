package io.kvreuse.transfer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvreuse.transfer.emulator.EmulatedCall;
import io.kvreuse.transfer.emulator.EmulatorControl;
import io.kvreuse.transfer.emulator.ErrorConvention;
import io.kvreuse.transfer.emulator.NixlCoreStatus;
import io.kvreuse.transfer.emulator.NixlEmulator;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Failure paths that only the emulator can provoke on demand: injected faults, stalls, dropped
 * notifications, disconnects, and both C-ABI error conventions.
 */
class EmulatorFaultInjectionTests {

    static final int BLOCK = 4096;
    static final int BLOCKS = 8;
    static final Duration WAIT = Duration.ofSeconds(10);

    final EmulatorControl control = NixlEmulator.control();
    final TestMemory memory = new TestMemory();
    TransferEngine engine;

    /** Prefill reads decode's blocks: agents, banks, the connected peer and prepared block sets. */
    record Pair(
            NixlAgent decode,
            NixlAgent prefill,
            PeerConnection peer,
            BlockSet local,
            BlockSet remote,
            SharedMemoryRegion decodeBank,
            SharedMemoryRegion prefillBank) {

        TransferRequest readAll() {
            return TransferRequest.read(local, remote, List.of(SlotRun.same(0, BLOCKS)));
        }
    }

    @BeforeEach
    void openEngine() {
        control.reset();
        engine = TransferEngine.open(TransferOptions.of(NixlEmulator.library()));
    }

    @AfterEach
    void closeEverything() {
        control.releaseStalledTransfers();
        engine.close();
        control.reset();
        memory.close();
    }

    NixlAgent agent(String role) {
        return engine.createAgent(role + "-" + UUID.randomUUID());
    }

    Pair pair() {
        NixlAgent decode = agent("decode");
        NixlAgent prefill = agent("prefill");
        SharedMemoryRegion decodeBank = memory.create((long) BLOCKS * BLOCK);
        SharedMemoryRegion prefillBank = memory.create((long) BLOCKS * BLOCK);
        TestMemory.fillBlocks(decodeBank, 3, BLOCKS, BLOCK);
        RegisteredRegion decodeRegion = decode.register(decodeBank, MemoryKind.DRAM, 0);
        RegisteredRegion prefillRegion = prefill.register(prefillBank, MemoryKind.DRAM, 0);
        PeerConnection peer = prefill.connect(decode.localMetadata());
        return new Pair(
                decode,
                prefill,
                peer,
                prefill.localBlocks(prefillRegion, BLOCK),
                peer.blocks(decodeRegion.asRemote(), BLOCK),
                decodeBank,
                prefillBank);
    }

    static Stream<Arguments> currentConventionFaults() {
        return Stream.of(
                Arguments.of(NixlCoreStatus.INVALID_PARAM, NixlInvalidParameterException.class, -1),
                Arguments.of(NixlCoreStatus.NOT_FOUND, NixlNotFoundException.class, -6),
                Arguments.of(NixlCoreStatus.BACKEND, NixlBackendException.class, -2),
                Arguments.of(NixlCoreStatus.REMOTE_DISCONNECT, NixlBackendException.class, -2),
                Arguments.of(NixlCoreStatus.NOT_ALLOWED, NixlBackendException.class, -2));
    }

    @ParameterizedTest
    @MethodSource("currentConventionFaults")
    void postWhenFaultInjectedThenSubmitThrowsMappedException(
            NixlCoreStatus fault, Class<? extends NixlException> expected, int code) {
        Pair pair = pair();
        control.failNext(EmulatedCall.POST_XFER_REQ, fault);

        assertThatThrownBy(() -> pair.prefill().submit(pair.readAll()))
                .isInstanceOf(expected)
                .hasMessageContaining("post_xfer_req")
                .satisfies(e -> assertThat(((NixlException) e).code()).isEqualTo(code));
        assertThat(control.bytesCopied()).isZero();
    }

    @ParameterizedTest
    @EnumSource(
            value = NixlCoreStatus.class,
            names = {"INVALID_PARAM", "NOT_FOUND", "BACKEND", "REMOTE_DISCONNECT"})
    void postWhenLegacyConventionThenInjectedFaultArrivesAsBackendCode(NixlCoreStatus fault) {
        Pair pair = pair();
        control.useErrorConvention(ErrorConvention.LEGACY);
        control.failNext(EmulatedCall.POST_XFER_REQ, fault);

        assertThatThrownBy(() -> pair.prefill().submit(pair.readAll()))
                .isInstanceOf(NixlBackendException.class)
                .satisfies(e -> assertThat(((NixlException) e).code()).isEqualTo(-2));
    }

    @Test
    void statusWhenFaultInjectedThenTransferFailsWithMappedException() {
        Pair pair = pair();
        control.stallTransfers();
        TransferHandle handle = pair.prefill().submit(pair.readAll());
        control.failNext(EmulatedCall.GET_XFER_STATUS, NixlCoreStatus.NOT_FOUND);

        assertThatThrownBy(() -> handle.await(WAIT))
                .isInstanceOf(NixlNotFoundException.class)
                .hasMessageContaining("get_xfer_status");
        assertThat(handle.state()).isEqualTo(TransferState.FAILED);
        control.releaseStalledTransfers();
        handle.close();
    }

    @Test
    void registerWhenFaultInjectedThenRegistrationRefused() {
        NixlAgent agent = agent("decode");
        SharedMemoryRegion bank = memory.create(BLOCK);
        control.failNext(EmulatedCall.REGISTER_MEM, NixlCoreStatus.BACKEND);

        assertThatThrownBy(() -> agent.register(bank, MemoryKind.DRAM, 0))
                .isInstanceOf(NixlBackendException.class)
                .hasMessageContaining("register_mem");
        RegisteredRegion retried = agent.register(bank, MemoryKind.DRAM, 0);
        assertThat(retried.isRegistered()).isTrue();
    }

    @Test
    void prepWhenFaultInjectedThenFailureNotCachedAndRetrySucceeds() {
        Pair pair = pair();
        RemoteRegion region =
                new RemoteRegion(MemoryKind.DRAM, pair.decodeBank().address(), BLOCK * 2L, 0);
        control.failNext(EmulatedCall.PREP_XFER_DLIST, NixlCoreStatus.BACKEND);

        assertThatThrownBy(() -> pair.peer().blocks(region, BLOCK)).isInstanceOf(NixlBackendException.class);
        assertThat(pair.peer().blocks(region, BLOCK).blockCount()).isEqualTo(2);
    }

    @Test
    void makeWhenFaultInjectedThenSubmitThrowsBeforePosting() {
        Pair pair = pair();
        control.failNext(EmulatedCall.MAKE_XFER_REQ, NixlCoreStatus.INVALID_PARAM);

        assertThatThrownBy(() -> pair.prefill().submit(pair.readAll()))
                .isInstanceOf(NixlInvalidParameterException.class)
                .hasMessageContaining("make_xfer_req");
        assertThat(control.transfersCompleted()).isZero();
    }

    @Test
    void metadataWhenFaultsInjectedThenExportAndLoadThrow() {
        NixlAgent decode = agent("decode");
        NixlAgent prefill = agent("prefill");
        byte[] metadata = decode.localMetadata();
        control.failNext(EmulatedCall.GET_LOCAL_MD, NixlCoreStatus.BACKEND);
        control.failNext(EmulatedCall.LOAD_REMOTE_MD, NixlCoreStatus.NOT_ALLOWED);

        assertThatThrownBy(decode::localMetadata).isInstanceOf(NixlBackendException.class);
        assertThatThrownBy(() -> prefill.connect(metadata))
                .isInstanceOf(NixlBackendException.class)
                .hasMessageContaining("load_remote_md");
    }

    @Test
    void awaitWhenTransferStalledThenDeadlineExpiresAndCancelStopsIt() {
        Pair pair = pair();
        control.stallTransfers();
        TransferHandle handle = pair.prefill().submit(pair.readAll());

        assertThatThrownBy(() -> handle.await(Duration.ofMillis(50))).isInstanceOf(TransferTimeoutException.class);
        assertThat(handle.state()).isEqualTo(TransferState.IN_PROGRESS);
        assertThat(handle.cancel()).isTrue();
        control.releaseStalledTransfers();

        assertThat(handle.state()).isEqualTo(TransferState.CANCELLED);
        assertThatThrownBy(() -> handle.await(WAIT)).isInstanceOf(TransferCancelledException.class);
        assertThat(control.bytesCopied()).isZero();
        assertThat(pair.prefillBank().read(0, BLOCK)).containsOnly(0);
    }

    @Test
    void statusWhenCopyDoneButNotYetPolledToSuccessThenNotificationWaitsForCompletion() {
        Pair pair = pair();
        PeerConnection toPrefill = pair.decode().connect(pair.prefill().localMetadata());
        control.completeAfterExtraPolls(200);
        BlockSet local =
                pair.decode().localBlocks(pair.decode().register(memory.create(BLOCK), MemoryKind.DRAM, 0), BLOCK);
        BlockSet remote = toPrefill.blocks(
                new RemoteRegion(MemoryKind.DRAM, pair.prefillBank().address(), BLOCK, 0), BLOCK);

        TransferHandle handle = pair.decode()
                .submit(TransferRequest.write(local, remote, List.of(SlotRun.same(0, 1)))
                        .withNotification("done"));
        Awaiting.until(() -> control.transfersCompleted() == 1, WAIT, "the copy");

        assertThat(handle.state()).isEqualTo(TransferState.IN_PROGRESS);
        assertThat(pair.prefill().takeNotifications()).isEmpty();
        handle.await(WAIT);
        assertThat(pair.prefill().takeNotifications())
                .extracting(Notification::text)
                .containsExactly("done");
    }

    @Test
    void notificationWhenDroppedThenTargetReceivesOnlyTheNextOne() {
        Pair pair = pair();
        control.dropNotifications(1);

        pair.prefill().submit(pair.readAll().withNotification("lost")).await(WAIT);
        pair.prefill().submit(pair.readAll().withNotification("kept")).await(WAIT);

        assertThat(control.notificationsDropped()).isEqualTo(1);
        assertThat(Awaiting.notifications(pair.decode(), 1, WAIT))
                .extracting(Notification::text)
                .containsExactly("kept");
    }

    @ParameterizedTest
    @EnumSource(ErrorConvention.class)
    void submitWhenPeerDisconnectedThenNotFoundInBothConventions(ErrorConvention convention) {
        Pair pair = pair();
        control.useErrorConvention(convention);
        control.disconnect(pair.prefill().name(), pair.decode().name());

        assertThatThrownBy(() -> pair.prefill().submit(pair.readAll())).isInstanceOf(NixlNotFoundException.class);
        assertThat(pair.peer().metadataLoaded()).isFalse();
    }

    @ParameterizedTest
    @EnumSource(ErrorConvention.class)
    void notifyWhenPeerDisconnectedThenNotFoundInBothConventions(ErrorConvention convention) {
        Pair pair = pair();
        control.useErrorConvention(convention);
        control.disconnect(pair.prefill().name(), pair.decode().name());

        assertThatThrownBy(() -> pair.peer().notify("hello")).isInstanceOf(NixlNotFoundException.class);
    }

    @ParameterizedTest
    @EnumSource(ErrorConvention.class)
    void blocksWhenRemoteDescriptorUncoveredThenInvalidParameterInBothConventions(ErrorConvention convention) {
        Pair pair = pair();
        control.useErrorConvention(convention);
        RemoteRegion tooLong =
                new RemoteRegion(MemoryKind.DRAM, pair.decodeBank().address(), (BLOCKS + 1L) * BLOCK, 0);

        assertThatThrownBy(() -> pair.peer().blocks(tooLong, BLOCK)).isInstanceOf(NixlInvalidParameterException.class);
    }

    @ParameterizedTest
    @EnumSource(ErrorConvention.class)
    void loopbackWhenDescriptorUncoveredThenInvalidParameterInBothConventions(ErrorConvention convention) {
        Pair pair = pair();
        control.useErrorConvention(convention);
        RemoteRegion foreign =
                new RemoteRegion(MemoryKind.DRAM, pair.decodeBank().address(), BLOCK, 0);

        assertThatThrownBy(() -> pair.prefill().loopback().blocks(foreign, BLOCK))
                .isInstanceOf(NixlInvalidParameterException.class);
    }

    @ParameterizedTest
    @EnumSource(ErrorConvention.class)
    void connectWhenOwnMetadataThenInvalidParameterInBothConventions(ErrorConvention convention) {
        NixlAgent agent = agent("self");
        control.useErrorConvention(convention);

        assertThatThrownBy(() -> agent.connect(agent.localMetadata()))
                .isInstanceOf(NixlInvalidParameterException.class);
    }

    @Test
    void countersWhenTransfersCompleteThenBytesCopiedMatchTelemetry() {
        Pair pair = pair();

        TransferTelemetry telemetry = pair.prefill().submit(pair.readAll()).await(WAIT);

        assertThat(telemetry.reportedByNixl()).isTrue();
        assertThat(telemetry.descriptorCount())
                .as("one run of contiguous blocks, merged")
                .isEqualTo(1);
        assertThat(control.bytesCopied()).isEqualTo(telemetry.totalBytes()).isEqualTo((long) BLOCKS * BLOCK);
        assertThat(control.transfersCompleted()).isEqualTo(1);
    }

    @Test
    void telemetryWhenCaptureDisabledThenEngineMeasuresItself() {
        engine.close();
        engine = TransferEngine.open(TransferOptions.of(NixlEmulator.library()).withCaptureTelemetry(false));
        Pair pair = pair();

        TransferTelemetry telemetry = pair.prefill().submit(pair.readAll()).await(WAIT);

        assertThat(telemetry.reportedByNixl()).isFalse();
        assertThat(telemetry.totalBytes()).isEqualTo((long) BLOCKS * BLOCK);
        assertThat(telemetry.transferDuration()).isPositive();
    }

    @Test
    void closeAgentWhenTransferStalledThenTransferCancelled() {
        Pair pair = pair();
        control.stallTransfers();
        TransferHandle handle = pair.prefill().submit(pair.readAll());

        pair.prefill().close();

        assertThat(handle.state()).isEqualTo(TransferState.CANCELLED);
        assertThatThrownBy(handle::cancel).isInstanceOf(HandleClosedException.class);
        handle.close();
    }
}
