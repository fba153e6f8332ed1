package io.kvreuse.transfer;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Path;
import org.junit.jupiter.api.BeforeEach;

/**
 * The contract against a real NIXL: run with {@code -Dkvreuse.nixl.library=/path/libnixl_capi.so}.
 * Skipped only when that property is absent.
 */
class NixlLibraryTransferEngineContractTests extends TransferEngineContractTests {

    static final String PROPERTY = "kvreuse.nixl.library";

    @Override
    @BeforeEach
    void openEngine() {
        assumeTrue(System.getProperty(PROPERTY) != null, "-D" + PROPERTY + " names no real libnixl_capi.so");
        super.openEngine();
    }

    @Override
    protected Path library() {
        return Path.of(System.getProperty(PROPERTY));
    }
}
