package io.kvreuse.transfer;

import io.kvreuse.transfer.emulator.NixlEmulator;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;

/** NIXL's strictness, against the kvreuse NIXL emulator, always. */
class EmulatorStrictnessContractTests extends StrictnessContractTests {

    @Override
    protected Path library() {
        return NixlEmulator.library();
    }

    @AfterEach
    void resetEmulator() {
        NixlEmulator.control().reset();
    }
}
