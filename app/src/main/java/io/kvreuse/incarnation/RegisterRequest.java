package io.kvreuse.incarnation;

import io.kvreuse.bank.InventoryRequests.CreateBank;
import jakarta.validation.Valid;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Pattern;
import jakarta.validation.constraints.Size;
import java.util.List;
import java.util.UUID;
import org.jspecify.annotations.Nullable;

/**
 * An engine's registration of one process start (API.md "Engine incarnations"). With {@code ready}
 * it is also the first heartbeat; a decode engine may send its retained bank along ({@code bank},
 * the body of the bank endpoint), created in the registration's transaction.
 */
record RegisterRequest(
        @Nullable UUID incarnationId,

        @Nullable
        @Size(min = 1, max = 253)
        @Pattern(regexp = "[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?", message = "must be a DNS-style name")
        String stableName,

        @NotNull EngineRole role,
        @NotBlank @Size(max = 200) String domainId,
        @NotBlank @Size(max = 253) String hostId,
        @Nullable @Size(min = 1, max = 253) String fabricDomain,
        @NotBlank @Size(max = 2048) @ControlEndpoint String controlEndpoint,
        @NotNull @Size(max = 64) List<@NotBlank @Size(max = 128) String> capabilities,
        @NotNull @Size(min = 1, max = 64) List<@NotNull @Valid RankRequest> ranks,
        @Nullable Boolean ready,
        @Nullable @Valid CreateBank bank) {

    /** Whether the registration is also the first heartbeat: the incarnation starts READY. */
    boolean startsReady() {
        return Boolean.TRUE.equals(ready);
    }

    /** One TP rank and the GPU it runs on. */
    record RankRequest(
            @NotNull @Min(0) @Max(63) Integer rank,
            @NotNull @Min(0) @Max(1023) Integer gpuOrdinal,
            @NotBlank @Size(max = 128) String gpuUuid) {}
}
