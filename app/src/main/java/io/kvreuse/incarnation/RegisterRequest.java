package io.kvreuse.incarnation;

import io.kvreuse.bank.InventoryRequests.CreateBank;
import io.swagger.v3.oas.annotations.media.Schema;
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
@Schema(description = "Registers an engine incarnation (Idempotency-Key honoured)")
record RegisterRequest(
        @Schema(description = "The id to use (absent: the control plane picks one)") @Nullable
        UUID incarnationId,

        @Schema(description = "A stable, human-readable engine name (DNS style), kept across incarnations")
        @Nullable
        @Size(min = 1, max = 253)
        @Pattern(regexp = "[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?", message = "must be a DNS-style name")
        String stableName,

        @Schema(description = "PREFILL or DECODE") @NotNull EngineRole role,

        @Schema(description = "The layout domain") @NotBlank @Size(max = 200)
        String domainId,

        @Schema(description = "The GPU host, as engines and its node agent name it") @NotBlank @Size(max = 253)
        String hostId,

        @Schema(description = "Multi-node NVLink fabric domain, when the host has one")
        @Nullable
        @Size(min = 1, max = 253)
        String fabricDomain,

        @Schema(description = "The engine's control endpoint, tcp://host:port")
        @NotBlank
        @Size(max = 2048)
        @ControlEndpoint
        String controlEndpoint,

        @Schema(
                description =
                        "Actions the engine performs, e.g. kv.fetch_gpu@1.0 (a donor and a target both need it for GPU hints)")
        @NotNull
        @Size(max = 64)
        List<@NotBlank @Size(max = 128) String> capabilities,

        @Schema(description = "One entry per rank (1–64), GPUs of hostId") @NotNull @Size(min = 1, max = 64)
        List<@NotNull @Valid RankRequest> ranks,

        @Schema(description = "true: the registration is also the first heartbeat, the incarnation starts READY")
        @Nullable
        Boolean ready,

        @Schema(
                description =
                        "A decode engine's retained bank, created in the registration's transaction (the bank endpoint's body)")
        @Nullable
        @Valid
        CreateBank bank) {

    /** Whether the registration is also the first heartbeat: the incarnation starts READY. */
    boolean startsReady() {
        return Boolean.TRUE.equals(ready);
    }

    /** One TP rank and the GPU it runs on. */
    @Schema(name = "IncarnationRankRequest", description = "One rank of the incarnation and its GPU")
    record RankRequest(
            @Schema(description = "Tensor-parallel rank") @NotNull @Min(0) @Max(63)
            Integer rank,

            @Schema(description = "GPU ordinal on its host") @NotNull @Min(0) @Max(1023)
            Integer gpuOrdinal,

            @Schema(description = "The GPU's UUID") @NotBlank @Size(max = 128)
            String gpuUuid) {}
}
