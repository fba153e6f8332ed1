package io.kvreuse.transfer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class NixlStatusTests {

    @ParameterizedTest
    @ValueSource(ints = {0, 1})
    void checkWhenSuccessOrInProgressThenReturnsCode(int code) {
        assertThat(NixlStatus.check(code, "post_xfer_req", "transfer #1")).isEqualTo(code);
    }

    @ParameterizedTest
    @CsvSource({
        "-1, io.kvreuse.transfer.NixlInvalidParameterException",
        "-2, io.kvreuse.transfer.NixlBackendException",
        "-3, io.kvreuse.transfer.NixlInvalidStateException",
        "-4, io.kvreuse.transfer.NixlNativeException",
        "-5, io.kvreuse.transfer.NixlTelemetryUnavailableException",
        "-6, io.kvreuse.transfer.NixlNotFoundException",
        "-42, io.kvreuse.transfer.NixlException"
    })
    void checkWhenErrorCodeThenTypedExceptionCarriesOperationHandleAndCode(int code, Class<?> type) {
        assertThatThrownBy(() -> NixlStatus.check(code, "post_xfer_req", "transfer #7"))
                .isExactlyInstanceOf(type)
                .hasMessageContaining("post_xfer_req")
                .hasMessageContaining("transfer #7")
                .satisfies(e -> {
                    NixlException failure = (NixlException) e;
                    assertThat(failure.code()).isEqualTo(code);
                    assertThat(failure.operation()).isEqualTo("post_xfer_req");
                    assertThat(failure.handle()).isEqualTo("transfer #7");
                });
    }
}
