package io.kvreuse.protocol;

import io.swagger.v3.oas.annotations.media.Schema;
import java.time.Instant;
import java.util.List;
import java.util.UUID;

/**
 * {@code GET /api/v1/agents/{hostId}/orders/unfinished}: a claimed order of the host with parts that
 * never reached a final report, for an agent process that starts while a previous one may have died
 * holding them; {@code parts} holds only those ranks and their last state.
 */
@Schema(
        name = "UnfinishedOrder",
        description = "A claimed order with parts that never reached a final report (read by a restarted agent)")
public record UnfinishedOrder(
        @Schema(description = "The transfer order") UUID orderId,
        @Schema(description = "The lease") UUID leaseId,

        @Schema(description = "Times the order was handed out (above 1: handed out again)")
        int claims,

        @Schema(description = "When it was last handed out") Instant claimedAt,

        @Schema(description = "The unfinished parts and their last reported state")
        List<Part> parts) {

    /** One unfinished part: QUEUED (never reported), RUNNING or UNCERTAIN. */
    @Schema(name = "UnfinishedPart", description = "An unfinished part")
    public record Part(
            @Schema(description = "Tensor-parallel rank") int rank,

            @Schema(description = "Last reported state", implementation = String.class)
            PartState state) {}
}
