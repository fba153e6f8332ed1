package io.kvreuse.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvreuse.transfer.MemoryKind;
import io.kvreuse.transfer.NixlAgent;
import io.kvreuse.transfer.SharedMemoryRegion;
import io.kvreuse.transfer.TransferEngine;
import io.kvreuse.transfer.TransferOptions;
import io.kvreuse.transfer.emulator.NixlEmulator;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** The agent's CUDA IPC import, against transfer-ffm's stand-in CUDA runtime built for tests. */
class CudaIpcImporterTests {

    private static final Path FAKE_RUNTIME = Path.of("../transfer-ffm/target/test-native/libkvreuse_fake_cudart.so");

    @Test
    void withoutACudaRuntimeTheImporterSaysWhyAndRefusesParts() {
        CudaIpcImporter importer = new CudaIpcImporter(List.of(Path.of("/nonexistent")));
        assertThat(importer.unavailableReason()).contains("libcudart.so not found");
        assertThatThrownBy(() -> importer.open("cuda-ipc://0/AAAA?size=4096")).isInstanceOf(PartRefusedException.class);
    }

    @Test
    void anExportedRegionImportsAsVramAndRegistersWithNixl() {
        assertThat(Files.isRegularFile(FAKE_RUNTIME))
                .as("built by transfer-ffm's test resources: " + FAKE_RUNTIME)
                .isTrue();
        CudaIpcImporter importer = new CudaIpcImporter(FAKE_RUNTIME, List.of());
        assertThat(importer.unavailableReason()).isEmpty();
        String name = "cu-" + UUID.randomUUID();
        try (SharedMemoryRegion gpu = SharedMemoryRegion.create(name, 1 << 16);
                TransferEngine engine = TransferEngine.open(TransferOptions.forNodeAgent(NixlEmulator.library()));
                NixlAgent agent = engine.createAgent("agent-cudaipc-" + UUID.randomUUID(), 0, () -> {})) {
            String ref = "cuda-ipc://0/" + handle(SharedMemoryRegion.pathFor(name)) + "?size=" + (1 << 16);
            try (ImportedRegion region = importer.open(ref)) {
                assertThat(region.kind()).isEqualTo(MemoryKind.VRAM);
                assertThat(region.size()).isEqualTo(1 << 16);
                assertThat(region.register(agent, 0)).isNotNull();
            }
        }
    }

    @Test
    void malformedOrUnopenableReferencesAreRefusedParts() {
        CudaIpcImporter importer = new CudaIpcImporter(FAKE_RUNTIME, List.of());
        assertThatThrownBy(() -> importer.open("cuda-ipc://0/not-base64!?size=1"))
                .isInstanceOf(PartRefusedException.class);
        assertThatThrownBy(() -> importer.open("cuda-ipc://0/" + handle(Path.of("/x"))))
                .isInstanceOf(PartRefusedException.class);
        assertThatThrownBy(() -> importer.open("cuda-ipc://0/"
                        + handle(Path.of("/dev/shm/kvreuse-missing-" + UUID.randomUUID())) + "?size=4096"))
                .isInstanceOf(PartRefusedException.class)
                .hasMessageContaining("cudaIpcOpenMemHandle");
    }

    private static String handle(Path path) {
        byte[] handle = new byte[64];
        byte[] bytes = path.toString().getBytes(StandardCharsets.UTF_8);
        System.arraycopy(bytes, 0, handle, 0, bytes.length);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(handle);
    }
}
