package io.kvreuse.orders;

import io.swagger.v3.oas.annotations.media.Schema;
import jakarta.validation.Valid;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.NotEmpty;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Pattern;
import jakarta.validation.constraints.Size;
import java.util.List;
import org.jspecify.annotations.Nullable;

/** Request bodies of the node-agent endpoints. */
final class AgentRequests {

    private AgentRequests() {}

    @Schema(
            name = "AgentRegistrationRequest",
            description = "A node agent registers its host's GPUs and their NIXL agents")
    record Register(
            @Schema(description = "The GPU host, as engines and its node agent name it")
            @NotBlank
            @Size(max = 200)
            @Pattern(regexp = "[A-Za-z0-9._:@-]+")
            String hostId,

            @Schema(description = "The GPUs the agent serves (1–64)") @NotEmpty @Size(max = 64)
            List<@NotNull @Valid Gpu> gpus,

            @Schema(description = "One NIXL agent per GPU") @NotNull @Size(max = 64)
            List<@NotNull @Valid NixlAgent> nixlAgents) {}

    @Schema(name = "AgentRegistrationGpu", description = "One GPU the agent serves")
    record Gpu(
            @Schema(description = "GPU ordinal on the host") @NotNull @Min(0) @Max(1023)
            Integer ordinal,

            @Schema(description = "The GPU's UUID") @NotBlank @Size(max = 200)
            String uuid) {}

    /** A NIXL agent's metadata blob, base64: it carries raw addresses and is never logged or shown. */
    @Schema(name = "AgentRegistrationNixlAgent", description = "One NIXL agent and its metadata")
    record NixlAgent(
            @Schema(description = "GPU ordinal on its host") @NotNull @Min(0) @Max(1023)
            Integer gpuOrdinal,

            @Schema(description = "NIXL agent name, kvreuse@<host>/gpu<ordinal>") @NotBlank @Size(max = 300)
            String name,

            @Schema(description = "NIXL agent metadata, base64 (holds raw addresses; never logged or shown)")
            @NotBlank
            @Size(max = 1_400_000)
            String metadata) {}

    @Schema(name = "AgentHeartbeatRequest", description = "Optional body of an agent heartbeat")
    record Heartbeat(
            @Schema(description = "The agent epoch it believes current") @Nullable @Min(1)
            Long fencingEpoch) {}

    enum PartState {
        RUNNING,
        DONE,
        FAILED,
        UNCERTAIN,
        QUIESCED
    }

    @Schema(name = "AgentPartReport", description = "Progress of one part of a transfer order")
    record PartReport(
            @Schema(description = "RUNNING, DONE, FAILED, UNCERTAIN or QUIESCED") @NotNull
            PartState state,

            @Schema(description = "Bytes moved") @NotNull @Min(0)
            Long bytes,

            @Schema(description = "Transfer duration in microseconds") @NotNull @Min(0)
            Long durationUs,

            @Schema(description = "NIXL status code of a failed part, when there is one") @Nullable
            Integer nativeStatus,

            @Schema(description = "Free text for people") @Nullable @Size(max = 2000)
            String detail,

            @Schema(description = "The agent's current epoch") @NotNull @Min(1)
            Long fencingEpoch) {}

    /** Part reports of many orders by the agent of one host, at its current epoch. */
    @Schema(name = "AgentPartReports", description = "Part reports of many orders, at the agent's current epoch")
    record PartReports(
            @Schema(description = "The agent's current epoch") @NotNull @Min(1)
            Long fencingEpoch,

            @Schema(description = "The reports (1–256)") @NotEmpty @Size(max = 256)
            List<@NotNull @Valid PartEntry> reports) {}

    @Schema(name = "AgentPartEntry", description = "One part report of a batch")
    record PartEntry(
            @Schema(description = "The transfer order") @NotNull
            java.util.UUID orderId,

            @Schema(description = "Tensor-parallel rank") @NotNull @Min(0)
            Integer rank,

            @Schema(description = "RUNNING, DONE, FAILED, UNCERTAIN or QUIESCED") @NotNull
            PartState state,

            @Schema(description = "Bytes moved") @NotNull @Min(0)
            Long bytes,

            @Schema(description = "Transfer duration in microseconds") @NotNull @Min(0)
            Long durationUs,

            @Schema(description = "NIXL status code of a failed part, when there is one") @Nullable
            Integer nativeStatus,

            @Schema(description = "Free text for people") @Nullable @Size(max = 2000)
            String detail) {

        PartReport report(long fencingEpoch) {
            return new PartReport(state, bytes, durationUs, nativeStatus, detail, fencingEpoch);
        }
    }
}
