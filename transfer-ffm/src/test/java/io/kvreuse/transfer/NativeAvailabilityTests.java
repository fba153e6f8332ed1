package io.kvreuse.transfer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvreuse.transfer.emulator.NixlEmulator;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class NativeAvailabilityTests {

    @Test
    void checkWhenEmulatorBuiltThenAvailable() {
        NativeAvailability availability = NativeAvailability.check(TransferOptions.of(NixlEmulator.library()));

        assertThat(availability.available()).isTrue();
        assertThat(availability.reason()).isEmpty();
    }

    @Test
    void checkWhenLibraryPathMissingThenUnavailableNamingPathAndFix() {
        Path missing = Path.of("/opt/nowhere/libnixl_capi.so");

        NativeAvailability availability = NativeAvailability.check(TransferOptions.of(missing));

        assertThat(availability.available()).isFalse();
        assertThat(availability.reason())
                .contains("not found at /opt/nowhere/libnixl_capi.so")
                .contains("TransferOptions.library");
    }

    @Test
    void checkWhenLibraryLacksNixlSymbolsThenUnavailableNamingThem() {
        Path notNixl = Path.of(System.getProperty("java.home"), "lib", "libzip.so");

        NativeAvailability availability = NativeAvailability.check(TransferOptions.of(notNixl));

        assertThat(availability.available()).isFalse();
        assertThat(availability.reason())
                .contains("does not export nixl_capi_create_configured_agent")
                .contains("libnixl_capi.so");
    }

    @Test
    void checkWhenAskedTwiceThenSameOutcomeReportedOnce() {
        TransferOptions options = TransferOptions.of(Path.of("/opt/nowhere/again/libnixl_capi.so"));

        assertThat(NativeAvailability.check(options)).isSameAs(NativeAvailability.check(options));
    }

    @Test
    void openWhenLibraryUnavailableThenExceptionCarriesReason() {
        TransferOptions options = TransferOptions.of(Path.of("/opt/nowhere/libnixl_capi.so"));

        assertThatThrownBy(() -> TransferEngine.open(options))
                .isInstanceOf(NativeUnavailableException.class)
                .satisfies(e -> assertThat(
                                ((NativeUnavailableException) e).availability().available())
                        .isFalse())
                .hasMessageContaining("not found");
    }

    @Test
    void checkWhenNativeAccessDisabledThenUnavailableWithFlagToAdd() throws Exception {
        Process child = ChildJvm.start(
                AvailabilityProbeMain.class, false, NixlEmulator.library().toString());

        String output = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();

        assertThat(child.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(output).startsWith("false ").contains("--enable-native-access=ALL-UNNAMED");
    }
}
