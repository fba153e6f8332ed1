package io.kvreuse.lease;

import io.r2dbc.spi.Readable;
import io.swagger.v3.oas.annotations.media.Schema;
import java.util.List;
import java.util.UUID;
import org.jspecify.annotations.Nullable;

/**
 * A command to an engine. {@code PIN}/{@code UNPIN} (donor, one per rank): hold or drop the lease's
 * blocks at these slots of the bank at this epoch. {@code DELIVERED} (target): the blocks are in
 * your destination, commit or abort. {@code RELEASE} (target): free the destination allocation.
 * Redelivered until acknowledged; {@code deliveries} counts the hand-outs.
 */
@Schema(
        description =
                "A command to an engine: PIN or UNPIN (donor, per rank), DELIVERED or RELEASE (target); handed out until acknowledged")
public record EngineCommand(
        @Schema(description = "The engine command") UUID commandId,

        @Schema(description = "PIN, UNPIN, DELIVERED or RELEASE")
        String type,

        @Schema(description = "The lease") UUID leaseId,

        @Schema(description = "The rank a PIN or UNPIN is for") @Nullable
        Integer rank,

        @Schema(description = "Times the command was handed out")
        int deliveries,

        @Schema(description = "The bank to pin in (PIN, UNPIN)") @Nullable
        UUID bankId,

        @Schema(description = "The bank epoch the pin is for (PIN, UNPIN)") @Nullable
        Long bankEpoch,

        @Schema(description = "The engine's fencing epoch the lease was made under") @Nullable
        Long leaseEpoch,

        @Schema(description = "Hashes of the lease's blocks (PIN, UNPIN, DELIVERED), u64 as decimal strings") @Nullable
        List<String> seqHashes,

        @Schema(description = "Slots to pin in the bank (PIN, UNPIN): runs [start, count]") @Nullable
        List<List<Integer>> slotRuns,

        @Schema(description = "Blocks the lease fetches") int fetchBlocks,

        @Schema(description = "Blocks the target already held")
        int localPrefixBlocks) {

    /** A command as the claim statement returns it, with its lease. */
    static EngineCommand of(Readable c, LeaseRow lease) {
        LeaseAggregate.CommandType type = LeaseAggregate.CommandType.valueOf(c.get("type", String.class));
        int rank = c.get("rank", Integer.class);
        boolean donor = type == LeaseAggregate.CommandType.PIN || type == LeaseAggregate.CommandType.UNPIN;
        return new EngineCommand(
                c.get("command_id", UUID.class),
                type.name(),
                lease.leaseId(),
                rank < 0 ? null : rank,
                c.get("deliveries", Integer.class),
                donor ? lease.bankId() : null,
                donor ? lease.bankEpoch() : null,
                donor ? lease.donorEpoch() : lease.targetEpoch(),
                donor || type == LeaseAggregate.CommandType.DELIVERED ? lease.hashes() : null,
                donor ? SlotRuns.list(lease.sourceRuns()) : null,
                lease.fetchBlocks(),
                lease.localPrefixBlocks());
    }

    /** The answer to an acknowledgement. {@code held} says, for a PIN, whether the donor must keep its pin. */
    @Schema(name = "CommandAck", description = "The answer to an acknowledgement")
    public record Ack(
            @Schema(description = "The engine command") UUID commandId,
            @Schema(description = "The command's type") String type,
            @Schema(description = "The lease") UUID leaseId,

            @Schema(description = "The lease's state after the acknowledgement")
            LeaseState leaseState,

            @Schema(description = "For a PIN: whether the donor must keep its pin") @Nullable
            Boolean held,

            @Schema(description = "true when the command had already been acknowledged (nothing changed)")
            boolean duplicate) {}
}
