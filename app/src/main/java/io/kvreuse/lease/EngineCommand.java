package io.kvreuse.lease;

import java.util.List;
import java.util.UUID;
import org.jspecify.annotations.Nullable;

/**
 * A command to an engine. {@code PIN}/{@code UNPIN} (donor, one per rank): hold or drop the lease's
 * blocks at these slots of the bank at this epoch. {@code DELIVERED} (target): the blocks are in
 * your destination, commit or abort. {@code RELEASE} (target): free the destination allocation.
 * Redelivered until acknowledged; {@code deliveries} counts the hand-outs.
 */
public record EngineCommand(
        UUID commandId,
        String type,
        UUID leaseId,
        @Nullable Integer rank,
        int deliveries,
        @Nullable UUID bankId,
        @Nullable Long bankEpoch,
        @Nullable Long leaseEpoch,
        @Nullable List<String> seqHashes,
        @Nullable List<List<Integer>> slotRuns,
        int fetchBlocks,
        int localPrefixBlocks) {

    static EngineCommand of(CommandStore.Command c, LeaseRow lease) {
        boolean donor = c.type().equals("PIN") || c.type().equals("UNPIN");
        boolean hashes = donor || c.type().equals("DELIVERED");
        return new EngineCommand(
                c.commandId(),
                c.type(),
                c.leaseId(),
                c.rank() < 0 ? null : c.rank(),
                c.deliveries(),
                donor ? lease.bankId() : null,
                donor ? lease.bankEpoch() : null,
                donor ? lease.donorEpoch() : lease.targetEpoch(),
                hashes ? unsigned(lease.seqHashes()) : null,
                donor ? SlotRuns.list(lease.sourceRuns()) : null,
                lease.fetchBlocks(),
                lease.localPrefixBlocks());
    }

    private static List<String> unsigned(long[] hashes) {
        return java.util.Arrays.stream(hashes).mapToObj(Long::toUnsignedString).toList();
    }

    /** The answer to an acknowledgement. {@code held} says, for a PIN, whether the donor must keep its pin. */
    public record Ack(
            UUID commandId,
            String type,
            UUID leaseId,
            LeaseState leaseState,
            @Nullable Boolean held,
            boolean duplicate) {}
}
