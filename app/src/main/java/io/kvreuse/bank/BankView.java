package io.kvreuse.bank;

import io.swagger.v3.oas.annotations.media.Schema;
import java.util.List;
import java.util.UUID;
import org.jspecify.annotations.Nullable;

/** A bank as the API shows it: publication, epoch, per-rank parts and block counts. */
@Schema(description = "A retained bank: state, epoch, per-rank parts and block counts")
public record BankView(
        @Schema(description = "The retained bank") UUID bankId,

        @Schema(description = "The owning decode incarnation")
        UUID incarnationId,

        @Schema(description = "PUBLISHED (visible to selection), UNPUBLISHED or DROPPED")
        BankState state,

        @Schema(description = "Why it is not published") @Nullable
        String unpublishedReason,

        @Schema(description = "The bank's epoch (bumped by every reset)")
        long bankEpoch,

        @Schema(description = "Capacity in blocks") int capacityBlocks,

        @Schema(description = "Ranks disagree about its blocks (unpublished until a snapshot or reset agrees)")
        boolean rankDisagreement,

        @Schema(description = "Blocks every rank holds alike, visible to selection")
        long eligibleBlocks,

        @Schema(description = "One part per rank") List<PartView> parts) {

    /** One rank's part of a bank. */
    @Schema(name = "BankPart", description = "One rank's part of a bank")
    public record PartView(
            @Schema(description = "Tensor-parallel rank") int rank,

            @Schema(
                    description =
                            "The engine's memory region: shm://<name> (emulation) or cuda-ipc://<gpuOrdinal>/<handle>?size=<bytes>")
            String regionRef,

            @Schema(description = "Bytes of one block in this region")
            long bytesPerBlock,

            @Schema(description = "The rank reported its part ready")
            boolean ready,

            @Schema(description = "The last inventory event applied")
            long appliedThroughEventId,

            @Schema(description = "The rank must send a snapshot (after an event gap)")
            boolean needsSnapshot,

            @Schema(description = "NATIVE_CACHE_CLEARED events counted")
            long nativeCacheClears,

            @Schema(description = "Blocks the rank holds") long blocks,

            @Schema(description = "Blocks pinned by live leases")
            long pinnedBlocks) {}
}
