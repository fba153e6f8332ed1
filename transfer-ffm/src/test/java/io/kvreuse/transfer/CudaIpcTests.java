package io.kvreuse.transfer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvreuse.transfer.cuda.CudaException;
import io.kvreuse.transfer.cuda.CudaIpc;
import io.kvreuse.transfer.emulator.NixlEmulator;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * The CUDA IPC import through FFM, against the test stand-in runtime built from {@code
 * src/test/c/fake_cudart.c} (its "handles" name shared-memory files): open, register as VRAM with
 * NIXL, move the bytes, close.
 */
class CudaIpcTests {

    private static final Path FAKE = Path.of("target/test-native/libkvreuse_fake_cudart.so");
    private static final int BLOCK = 4096;

    @Test
    void missingRuntimeGivesOneClearReason() {
        assertThat(CudaIpc.unavailableReason(Path.of("/nonexistent/libcudart.so.12")))
                .contains("not found");
        assertThatThrownBy(() -> CudaIpc.open(Path.of("/nonexistent/libcudart.so.12")))
                .hasMessageContaining("not found");
    }

    @Test
    void aLibraryWithoutTheCudaSymbolsIsNotACudaRuntime() {
        assertThat(CudaIpc.unavailableReason(NixlEmulator.library())).contains("lacks cudaSetDevice");
    }

    @Test
    void anImportedRegionRegistersAsVramAndItsBytesMove() {
        String name = "cudaipc-" + UUID.randomUUID();
        try (SharedMemoryRegion gpu = SharedMemoryRegion.create(name, 4L * BLOCK);
                SharedMemoryRegion host = SharedMemoryRegion.create(name + "-host", 4L * BLOCK)) {
            byte[] pattern = TestMemory.pattern(7, 0, 4 * BLOCK);
            gpu.write(0, pattern);
            CudaIpc.Mapping mapping = CudaIpc.open(FAKE).importHandle(0, handle(SharedMemoryRegion.pathFor(name)));
            try (TransferEngine engine = TransferEngine.open(TransferOptions.forNodeAgent(NixlEmulator.library()));
                    NixlAgent agent = engine.createAgent("cudaipc-" + UUID.randomUUID(), 0, () -> {})) {
                RegisteredRegion vram = agent.registerImported(MemoryKind.VRAM, mapping.address(), 4L * BLOCK, 0);
                RegisteredRegion dram = agent.register(host, MemoryKind.DRAM, 0);
                BlockSet local = agent.localBlocks(vram, BLOCK);
                BlockSet remote = agent.loopback().blocks(dram.asRemote(), BLOCK);
                TransferTelemetry telemetry = agent.submit(
                                TransferRequest.write(local, remote, List.of(new SlotRun(0, 0, 4))))
                        .await(Duration.ofSeconds(10));
                assertThat(telemetry.lane()).isEqualTo(TransferLane.CUDA_COPY);
                assertThat(host.read(0, 4 * BLOCK)).isEqualTo(pattern);
            } finally {
                mapping.close();
                mapping.close();
            }
            assertThatThrownBy(mapping::address).isInstanceOf(IllegalStateException.class);
        }
    }

    @Test
    void aZeroedHandleIsInvalidArgumentAsTheRealRuntimeAnswers() {
        assertThatThrownBy(() -> CudaIpc.open(FAKE).importHandle(0, new byte[CudaIpc.HANDLE_BYTES]))
                .isInstanceOfSatisfying(CudaException.class, e -> {
                    assertThat(e.code()).isEqualTo(1);
                    assertThat(e.operation()).isEqualTo("cudaIpcOpenMemHandle");
                    assertThat(e.getMessage()).contains("invalid argument").doesNotContain("unknown error");
                });
    }

    @Test
    void anInvalidDeviceIsACudaErrorWithItsMessage() {
        assertThatThrownBy(() -> CudaIpc.open(FAKE).importHandle(99, new byte[CudaIpc.HANDLE_BYTES]))
                .isInstanceOfSatisfying(CudaException.class, e -> {
                    assertThat(e.code()).isEqualTo(101);
                    assertThat(e.operation()).isEqualTo("cudaSetDevice");
                    assertThat(e.getMessage()).contains("invalid device ordinal");
                });
    }

    @Test
    void aHandleThatOpensNothingIsACudaError() {
        assertThatThrownBy(() -> CudaIpc.open(FAKE)
                        .importHandle(0, handle(Path.of("/dev/shm/kvreuse-no-such-" + UUID.randomUUID()))))
                .isInstanceOf(CudaException.class)
                .hasMessageContaining("cudaIpcOpenMemHandle");
        assertThatThrownBy(() -> CudaIpc.open(FAKE).importHandle(0, new byte[16]))
                .isInstanceOf(IllegalArgumentException.class);
    }

    private static byte[] handle(Path path) {
        byte[] handle = new byte[CudaIpc.HANDLE_BYTES];
        byte[] bytes = path.toString().getBytes(StandardCharsets.UTF_8);
        System.arraycopy(bytes, 0, handle, 0, bytes.length);
        return handle;
    }
}
