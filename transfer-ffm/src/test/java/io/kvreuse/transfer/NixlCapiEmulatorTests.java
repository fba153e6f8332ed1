package io.kvreuse.transfer;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.transfer.emulator.EmulatorControl;
import io.kvreuse.transfer.emulator.ErrorConvention;
import io.kvreuse.transfer.emulator.NixlEmulator;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** The raw binding against the emulator: ABI rules the idiomatic layer never lets callers break. */
class NixlCapiEmulatorTests {

    final NixlCapi capi = NativeLibraries.load(NixlEmulator.library()).require();
    final EmulatorControl control = NixlEmulator.control();

    @AfterEach
    void reset() {
        control.reset();
    }

    @ParameterizedTest
    @EnumSource(ErrorConvention.class)
    void destroyWhenRequestNotReleasedThenInvalidStateInBothConventions(ErrorConvention convention) {
        control.useErrorConvention(convention);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment agent = created(
                    arena,
                    out -> capi.createConfiguredAgent(
                            arena.allocateFrom("raw-" + convention), arena.allocate(NixlCapi.AGENT_CONFIG), out));
            created(arena, out -> capi.createBackend(agent, arena.allocateFrom("UCX"), MemorySegment.NULL, out));
            MemorySegment memory = arena.allocate(256);
            MemorySegment reg = created(arena, out -> capi.createRegDlist(MemoryKind.DRAM.code(), out));
            capi.regDlistAddDesc(reg, memory.address(), 256, 0, MemorySegment.NULL, 0);
            assertThat(capi.registerMem(agent, reg, MemorySegment.NULL)).isZero();
            MemorySegment list = created(arena, out -> capi.createXferDlist(MemoryKind.DRAM.code(), out));
            capi.xferDlistAddDesc(list, memory.address(), 64, 0);
            capi.xferDlistAddDesc(list, memory.address() + 128, 64, 0);
            MemorySegment local = created(
                    arena, out -> capi.prepXferDlist(agent, arena.allocateFrom(""), list, out, MemorySegment.NULL));
            MemorySegment remote = created(
                    arena,
                    out -> capi.prepXferDlist(
                            agent, arena.allocateFrom("raw-" + convention), list, out, MemorySegment.NULL));
            MemorySegment request = created(
                    arena,
                    out -> capi.makeXferReq(
                            agent,
                            TransferOp.WRITE.code(),
                            local,
                            arena.allocateFrom(JAVA_INT, 0),
                            1,
                            remote,
                            arena.allocateFrom(JAVA_INT, 1),
                            1,
                            out,
                            MemorySegment.NULL));

            assertThat(capi.destroyXferReq(request)).isEqualTo(NixlStatus.INVALID_STATE);
            assertThat(capi.releaseXferReq(agent, request)).isZero();
            assertThat(capi.destroyXferReq(request)).isZero();
            assertThat(capi.makeXferReq(
                            agent,
                            TransferOp.WRITE.code(),
                            remote,
                            arena.allocateFrom(JAVA_INT, 0),
                            1,
                            local,
                            arena.allocateFrom(JAVA_INT, 1),
                            1,
                            arena.allocate(ADDRESS),
                            MemorySegment.NULL))
                    .isEqualTo(convention == ErrorConvention.LEGACY ? NixlStatus.BACKEND : NixlStatus.INVALID_PARAM);
            assertThat(capi.destroyAgent(agent)).isZero();
        }
    }

    @ParameterizedTest
    @EnumSource(ErrorConvention.class)
    void callWhenNullHandleThenInvalidParamInBothConventions(ErrorConvention convention) {
        control.useErrorConvention(convention);

        assertThat(capi.destroyAgent(MemorySegment.NULL)).isEqualTo(NixlStatus.INVALID_PARAM);
    }

    @Test
    void telemetryWhenAgentCreatedWithoutCaptureThenNoTelemetryCode() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment agent = created(
                    arena,
                    out -> capi.createConfiguredAgent(
                            arena.allocateFrom("raw-telemetry"), arena.allocate(NixlCapi.AGENT_CONFIG), out));
            MemorySegment fakeRequest = arena.allocate(512);

            assertThat(capi.getXferTelemetry(agent, fakeRequest, arena.allocate(NixlCapi.TELEMETRY)))
                    .isEqualTo(NixlStatus.NO_TELEMETRY);
            capi.destroyAgent(agent);
        }
    }

    interface Creator {
        int create(MemorySegment out);
    }

    static MemorySegment created(Arena arena, Creator creator) {
        MemorySegment out = arena.allocate(ADDRESS);
        assertThat(creator.create(out)).isZero();
        return out.get(ADDRESS, 0);
    }
}
