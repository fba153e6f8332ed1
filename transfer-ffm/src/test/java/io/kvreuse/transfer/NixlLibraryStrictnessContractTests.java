package io.kvreuse.transfer;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Path;
import org.junit.jupiter.api.BeforeEach;

/**
 * NIXL's strictness against a real NIXL: {@code -Dkvreuse.nixl.library=/path/libnixl_capi.so}
 * (GPU lanes also need {@code -Dkvreuse.cuda.runtime=/path/libcudart.so}). Skipped without it.
 */
class NixlLibraryStrictnessContractTests extends StrictnessContractTests {

    @BeforeEach
    void requireLibrary() {
        assumeTrue(
                System.getProperty(NixlLibraryTransferEngineContractTests.PROPERTY) != null,
                "-D" + NixlLibraryTransferEngineContractTests.PROPERTY + " names no real libnixl_capi.so");
    }

    @Override
    protected Path library() {
        return Path.of(System.getProperty(NixlLibraryTransferEngineContractTests.PROPERTY));
    }
}
