package io.kvreuse.orders;

import io.swagger.v3.oas.annotations.media.Schema;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * An order as handed to the agent that initiates the transfer: per rank the source and destination
 * ({@code hostId, gpuOrdinal, nixlAgent, regionRef, slotRuns, bytesPerBlock}) and the bytes to move.
 * For a cross-host (MNNVL) transfer {@code remoteAgents} carries the donor host's NIXL metadata to
 * load; it is empty on one host. {@code claims} counts hand-outs (more than one: a redelivery).
 */
@Schema(description = "An order for a node agent: per rank, where the blocks are, where they go and the bytes to move")
public record TransferOrder(
        @Schema(description = "The transfer order") UUID orderId,
        @Schema(description = "The lease") UUID leaseId,

        @Schema(description = "The host whose agent runs it")
        String hostId,

        @Schema(description = "Times the order was handed out (above 1: handed out again)")
        int claims,

        @Schema(description = "One part per rank") List<Part> parts,

        @Schema(description = "Donor-host NIXL agents for a cross-host transfer (empty on one host)")
        List<RemoteAgent> remoteAgents) {

    @Schema(name = "TransferOrderPart", description = "One rank's transfer")
    public record Part(
            @Schema(description = "Tensor-parallel rank") int rank,

            @Schema(
                    description = "Where the blocks are",
                    implementation = io.kvreuse.protocol.TransferOrder.Endpoint.class)
            Map<String, Object> source,

            @Schema(description = "Where they go", implementation = io.kvreuse.protocol.TransferOrder.Endpoint.class)
            Map<String, Object> destination,

            @Schema(description = "Source slot runs [start, count]")
            List<List<Integer>> slotRuns,

            @Schema(description = "Bytes to move") long bytes) {}

    @Schema(name = "TransferOrderRemoteAgent", description = "A donor host's NIXL agent for a cross-host transfer")
    public record RemoteAgent(
            @Schema(description = "The GPU host, as engines and its node agent name it")
            String hostId,

            @Schema(description = "GPU ordinal on its host") int gpuOrdinal,

            @Schema(description = "NIXL agent name, kvreuse@<host>/gpu<ordinal>")
            String name,

            @Schema(description = "NIXL agent metadata, base64 (holds raw addresses; never logged or shown)")
            String metadata) {}

    /**
     * A claimed order with parts not yet final, for an agent process that starts while a previous
     * one may have died holding them; {@code parts} lists only the unfinished ranks and their state.
     */
    @Schema(
            name = "UnfinishedOrder",
            description = "A claimed order with parts that never reached a final report (read by a restarted agent)")
    public record Unfinished(
            @Schema(description = "The transfer order") UUID orderId,
            @Schema(description = "The lease") UUID leaseId,

            @Schema(description = "Times the order was handed out (above 1: handed out again)")
            int claims,

            @Schema(description = "When it was last handed out")
            Instant claimedAt,

            @Schema(description = "The unfinished parts and their last reported state")
            List<PartState> parts) {}

    /** One unfinished part of a claimed order. */
    @Schema(name = "UnfinishedPart", description = "An unfinished part")
    public record PartState(
            @Schema(description = "Tensor-parallel rank") int rank,
            @Schema(description = "Last reported state") String state) {}

    /** The answer to a part report. */
    @Schema(name = "PartReportAck", description = "The answer to a part report")
    public record PartAck(
            @Schema(description = "The transfer order") UUID orderId,
            @Schema(description = "Tensor-parallel rank") int rank,

            @Schema(description = "The part's state after the report")
            String state,

            @Schema(description = "The lease's state after this report")
            String leaseState) {}
}
