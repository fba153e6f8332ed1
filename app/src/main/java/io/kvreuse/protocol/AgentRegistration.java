package io.kvreuse.protocol;

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

/**
 * {@code POST /api/v1/agents}: the host, its GPUs and one NIXL agent per GPU. {@code metadata} is
 * the NIXL blob in base64; it carries raw addresses, so {@link #toString()} never shows it.
 */
@Schema(name = "AgentRegistrationRequest", description = "A node agent registers its host's GPUs and their NIXL agents")
public record AgentRegistration(
        @Schema(description = "The GPU host, as engines and its node agent name it")
        @NotBlank
        @Size(max = 200)
        @Pattern(regexp = "[A-Za-z0-9._:@-]+")
        String hostId,

        @Schema(description = "The GPUs the agent serves (1–64)") @NotEmpty @Size(max = 64)
        List<@NotNull @Valid Gpu> gpus,

        @Schema(description = "One NIXL agent per GPU") @NotNull @Size(max = 64)
        List<@NotNull @Valid NixlAgent> nixlAgents) {

    @Schema(name = "AgentRegistrationGpu", description = "One GPU the agent serves")
    public record Gpu(
            @Schema(description = "GPU ordinal on the host") @NotNull @Min(0) @Max(1023)
            Integer ordinal,

            @Schema(description = "The GPU's UUID") @NotBlank @Size(max = 200)
            String uuid) {}

    /** A NIXL agent's metadata blob, base64: it carries raw addresses and is never logged or shown. */
    @Schema(name = "AgentRegistrationNixlAgent", description = "One NIXL agent and its metadata")
    public record NixlAgent(
            @Schema(description = "GPU ordinal on its host") @NotNull @Min(0) @Max(1023)
            Integer gpuOrdinal,

            @Schema(description = "NIXL agent name, kvreuse@<host>/gpu<ordinal>") @NotBlank @Size(max = 300)
            String name,

            @Schema(description = "NIXL agent metadata, base64 (holds raw addresses; never logged or shown)")
            @NotBlank
            @Size(max = 1_400_000)
            String metadata) {
        @Override
        public String toString() {
            return "NixlAgent[gpuOrdinal=" + gpuOrdinal + ", name=" + name + ", metadata=<"
                    + (metadata == null ? 0 : metadata.length()) + " base64 chars>]";
        }
    }

    /** {@code POST /api/v1/agents/{hostId}/heartbeat}, optional: the epoch the agent believes current. */
    @Schema(name = "AgentHeartbeatRequest", description = "Optional body of an agent heartbeat")
    public record Heartbeat(
            @Schema(description = "The agent epoch it believes current") @Nullable @Min(1)
            Long fencingEpoch) {}
}
