package io.kvreuse.orders;

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

    record Register(
            @NotBlank @Size(max = 200) @Pattern(regexp = "[A-Za-z0-9._:@-]+")
            String hostId,

            @NotEmpty @Size(max = 64) List<@NotNull @Valid Gpu> gpus,
            @NotNull @Size(max = 64) List<@NotNull @Valid NixlAgent> nixlAgents) {}

    record Gpu(
            @NotNull @Min(0) @Max(1023) Integer ordinal,
            @NotBlank @Size(max = 200) String uuid) {}

    /** A NIXL agent's metadata blob, base64: it carries raw addresses and is never logged or shown. */
    record NixlAgent(
            @NotNull @Min(0) @Max(1023) Integer gpuOrdinal,
            @NotBlank @Size(max = 300) String name,
            @NotBlank @Size(max = 1_400_000) String metadata) {}

    record Heartbeat(@Nullable @Min(1) Long fencingEpoch) {}

    enum PartState {
        RUNNING,
        DONE,
        FAILED,
        UNCERTAIN,
        QUIESCED
    }

    record PartReport(
            @NotNull PartState state,
            @NotNull @Min(0) Long bytes,
            @NotNull @Min(0) Long durationUs,
            @Nullable Integer nativeStatus,
            @Nullable @Size(max = 2000) String detail,
            @NotNull @Min(1) Long fencingEpoch) {}

    /** Part reports of many orders by the agent of one host, at its current epoch. */
    record PartReports(
            @NotNull @Min(1) Long fencingEpoch,
            @NotEmpty @Size(max = 256) List<@NotNull @Valid PartEntry> reports) {}

    record PartEntry(
            @NotNull java.util.UUID orderId,
            @NotNull @Min(0) Integer rank,
            @NotNull PartState state,
            @NotNull @Min(0) Long bytes,
            @NotNull @Min(0) Long durationUs,
            @Nullable Integer nativeStatus,
            @Nullable @Size(max = 2000) String detail) {

        PartReport report(long fencingEpoch) {
            return new PartReport(state, bytes, durationUs, nativeStatus, detail, fencingEpoch);
        }
    }
}
