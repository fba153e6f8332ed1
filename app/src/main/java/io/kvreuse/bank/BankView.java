package io.kvreuse.bank;

import java.util.List;
import java.util.UUID;
import org.jspecify.annotations.Nullable;

/** A bank as the API shows it: publication, epoch, per-rank parts and block counts. */
public record BankView(
        UUID bankId,
        UUID incarnationId,
        BankState state,
        @Nullable String unpublishedReason,
        long bankEpoch,
        int capacityBlocks,
        boolean rankDisagreement,
        long eligibleBlocks,
        List<PartView> parts) {

    /** One rank's part of a bank. */
    public record PartView(
            int rank,
            String regionRef,
            long bytesPerBlock,
            boolean ready,
            long appliedThroughEventId,
            boolean needsSnapshot,
            long nativeCacheClears,
            long blocks,
            long pinnedBlocks) {}
}
