package io.kvreuse.bank;

import io.kvreuse.hash.SeqHash;
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

    public record CreateBank(
            @NotNull @Min(1) @Max(10_000_000) Integer capacityBlocks,
            @NotNull @Size(min = 1, max = 64) List<@Valid @NotNull Part> parts) {}

    record Part(
            @NotNull @Min(0) @Max(63) Integer rank,

            @NotBlank @Size(max = 512) @io.kvreuse.region.RegionReference
            String regionRef,

            @NotNull @Min(1) Long bytesPerBlock,
            @Nullable Boolean ready) {

        /** A part created ready: registered and usable at once, as if its ready call followed. */
        boolean startsReady() {
            return Boolean.TRUE.equals(ready);
        }
    }

    record Events(
            @NotNull @Min(0) @Max(63) Integer rank,
            @NotNull @Min(1) Long firstEventId,
            @NotNull @Size(min = 1, max = MAX_EVENTS) List<@Valid @NotNull Event> events) {}

    enum EventType {
        STORED,
        REMOVED,
        NATIVE_CACHE_CLEARED
    }

    record Event(
            @NotNull EventType type,
            @Nullable List<@Valid @NotNull Block> blocks,
            @Nullable List<@NotNull String> seqHashes) {}

    record Block(
            @NotNull String seqHash,
            @Nullable String parentHash,
            @NotNull @Min(0) @Max(100_000_000) Integer position,
            @NotNull @Min(0) Integer slot,
            @Nullable @Size(max = 256) String mmLineage) {

        InventoryBlock parse(String where) {
            Long parent = parentHash == null ? null : SeqHash.parse(parentHash, where + ".parentHash");
            String lineage = mmLineage == null || mmLineage.isBlank() || mmLineage.equals("NONE") ? null : mmLineage;
            return new InventoryBlock(SeqHash.parse(seqHash, where + ".seqHash"), parent, position, slot, lineage);
        }
    }

    record Snapshot(
            @NotNull @Min(0) Long throughEventId, @NotNull List<@Valid @NotNull Block> blocks) {}
}
