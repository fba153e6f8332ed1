package io.kvreuse.protocol;

import io.swagger.v3.oas.annotations.media.Schema;
import jakarta.validation.Valid;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotEmpty;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Size;
import java.util.List;
import java.util.UUID;
import org.jspecify.annotations.Nullable;

/** {@code POST /api/v1/orders/{orderId}/parts/{rank}}; {@code fencingEpoch} is the agent's registration epoch. */
@Schema(name = "AgentPartReport", description = "Progress of one part of a transfer order")
public record PartReport(
        @Schema(
                description = "RUNNING, DONE, FAILED, UNCERTAIN or QUIESCED",
                allowableValues = {"RUNNING", "DONE", "FAILED", "UNCERTAIN", "QUIESCED"})
        @NotNull
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
        Long fencingEpoch) {

    public PartReport withEpoch(long epoch) {
        return new PartReport(state, bytes, durationUs, nativeStatus, detail, epoch);
    }

    /**
     * {@code POST /api/v1/agents/{hostId}/parts}: part reports of many orders by the agent of one
     * host, at its current epoch.
     */
    @Schema(name = "AgentPartReports", description = "Part reports of many orders, at the agent's current epoch")
    public record Batch(
            @Schema(description = "The agent's current epoch") @NotNull @Min(1)
            Long fencingEpoch,

            @Schema(description = "The reports (1–256)") @NotEmpty @Size(max = 256)
            List<@NotNull @Valid Entry> reports) {}

    /** One report of a {@link Batch}: the part it is about and what the agent says of it. */
    @Schema(name = "AgentPartEntry", description = "One part report of a batch")
    public record Entry(
            @Schema(description = "The transfer order") @NotNull
            UUID orderId,

            @Schema(description = "Tensor-parallel rank") @NotNull @Min(0)
            Integer rank,

            @Schema(
                    description = "RUNNING, DONE, FAILED, UNCERTAIN or QUIESCED",
                    allowableValues = {"RUNNING", "DONE", "FAILED", "UNCERTAIN", "QUIESCED"})
            @NotNull
            PartState state,

            @Schema(description = "Bytes moved") @NotNull @Min(0)
            Long bytes,

            @Schema(description = "Transfer duration in microseconds") @NotNull @Min(0)
            Long durationUs,

            @Schema(description = "NIXL status code of a failed part, when there is one") @Nullable
            Integer nativeStatus,

            @Schema(description = "Free text for people") @Nullable @Size(max = 2000)
            String detail) {

        /** This entry as the single report it stands for, at the batch's epoch. */
        public PartReport report(long fencingEpoch) {
            return new PartReport(state, bytes, durationUs, nativeStatus, detail, fencingEpoch);
        }
    }

    /** The answer to a part report. */
    @Schema(name = "PartReportAck", description = "The answer to a part report")
    public record Ack(
            @Schema(description = "The transfer order") UUID orderId,
            @Schema(description = "Tensor-parallel rank") int rank,

            @Schema(description = "The part's state after the report", implementation = String.class)
            PartState state,

            @Schema(description = "The lease's state after this report")
            String leaseState) {}
}
