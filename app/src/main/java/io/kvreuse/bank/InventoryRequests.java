package io.kvreuse.bank;

import io.kvreuse.hash.SeqHash;
import io.swagger.v3.oas.annotations.media.Schema;
import jakarta.validation.Valid;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Size;
import java.util.List;
import org.jspecify.annotations.Nullable;

/** Request bodies of the bank API, as engines send them (hashes as strings). */
public final class InventoryRequests {

    /** Largest number of events in one batch. */
    static final int MAX_EVENTS = 1024;
    /** Largest number of blocks and removed hashes, summed over one batch. */
    static final int MAX_BATCH_ITEMS = 16_384;

    private InventoryRequests() {}

    @Schema(
            name = "CreateBankRequest",
            description = "A retained bank for a decode incarnation: its capacity and one part per rank")
    public record CreateBank(
            @Schema(description = "Blocks the bank holds per rank (1–10,000,000)") @NotNull @Min(1) @Max(10_000_000)
            Integer capacityBlocks,

            @Schema(description = "One part per rank (1–64)") @NotNull @Size(min = 1, max = 64)
            List<@Valid @NotNull Part> parts) {}

    @Schema(name = "BankPartRequest", description = "One rank's part of a bank: the region that holds its blocks")
    record Part(
            @Schema(description = "Tensor-parallel rank") @NotNull @Min(0) @Max(63)
            Integer rank,

            @Schema(
                    description =
                            "The engine's memory region: shm://<name> (emulation) or cuda-ipc://<gpuOrdinal>/<handle>?size=<bytes>")
            @NotBlank
            @Size(max = 512)
            @io.kvreuse.region.RegionReference
            String regionRef,

            @Schema(description = "Bytes of one block in this region") @NotNull @Min(1)
            Long bytesPerBlock,

            @Schema(description = "true: the part is registered and usable at once, as if its ready call followed")
            @Nullable
            Boolean ready) {

        /** A part created ready: registered and usable at once, as if its ready call followed. */
        boolean startsReady() {
            return Boolean.TRUE.equals(ready);
        }
    }

    @Schema(
            name = "InventoryEventBatch",
            description = "An ordered batch of one rank's inventory events, ids consecutive from firstEventId")
    record Events(
            @Schema(description = "Tensor-parallel rank") @NotNull @Min(0) @Max(63)
            Integer rank,

            @Schema(description = "Id of the first event; the others follow consecutively") @NotNull @Min(1)
            Long firstEventId,

            @Schema(description = "The events (1–1,024)") @NotNull @Size(min = 1, max = MAX_EVENTS)
            List<@Valid @NotNull Event> events) {}

    enum EventType {
        STORED,
        REMOVED,
        NATIVE_CACHE_CLEARED
    }

    @Schema(
            name = "InventoryEvent",
            description = "One inventory event: blocks stored, hashes removed, or the engine's native cache cleared")
    record Event(
            @Schema(description = "STORED, REMOVED or NATIVE_CACHE_CLEARED") @NotNull
            EventType type,

            @Schema(description = "The blocks stored (STORED)") @Nullable
            List<@Valid @NotNull Block> blocks,

            @Schema(description = "The hashes removed (REMOVED), u64 as decimal strings") @Nullable
            List<@NotNull String> seqHashes) {}

    @Schema(name = "InventoryBlock", description = "A block held at a slot of the bank")
    record Block(
            @Schema(description = "The block's sequence hash, u64 as a decimal string (0x hex accepted)") @NotNull
            String seqHash,

            @Schema(description = "The previous block's hash (absent for a root)") @Nullable
            String parentHash,

            @Schema(description = "Position of the block in its chain, from 0") @NotNull @Min(0) @Max(100_000_000)
            Integer position,

            @Schema(description = "Slot of the bank that holds it") @NotNull @Min(0)
            Integer slot,

            @Schema(description = "Multimodal lineage the blocks belong to (absent: text only)")
            @Nullable
            @Size(max = 256)
            String mmLineage) {

        InventoryBlock parse(String where) {
            Long parent = parentHash == null ? null : SeqHash.parse(parentHash, where + ".parentHash");
            String lineage = mmLineage == null || mmLineage.isBlank() || mmLineage.equals("NONE") ? null : mmLineage;
            return new InventoryBlock(SeqHash.parse(seqHash, where + ".seqHash"), parent, position, slot, lineage);
        }
    }

    @Schema(name = "InventorySnapshot", description = "The whole content of one rank, replacing what was there")
    record Snapshot(
            @Schema(description = "The last event id the snapshot includes") @NotNull @Min(0)
            Long throughEventId,

            @Schema(description = "Every block the rank holds") @NotNull
            List<@Valid @NotNull Block> blocks) {}
}
