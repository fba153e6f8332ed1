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
final class InventoryRequests {

    /** Largest number of events in one batch. */
    static final int MAX_EVENTS = 1024;
    /** Largest number of blocks and removed hashes, summed over one batch. */
    static final int MAX_BATCH_ITEMS = 16_384;

    private InventoryRequests() {}

    record CreateBank(
            @NotNull @Min(1) @Max(10_000_000) Integer capacityBlocks,
            @NotNull @Size(min = 1, max = 64) List<@Valid @NotNull Part> parts,
            @Valid @Nullable EventSourceRequest eventSource) {

        CreateBank(Integer capacityBlocks, List<Part> parts) {
            this(capacityBlocks, parts, null);
        }
    }

    record Part(
            @NotNull @Min(0) @Max(63) Integer rank,

            @NotBlank @Size(max = 512) @io.kvreuse.region.RegionReference
            String regionRef,

            @NotNull @Min(1) Long bytesPerBlock) {}

    /**
     * One ordered batch of a rank. Event ids count from 0 or from 1: a rank's first batch may start
     * at either, every later one continues where the rank stands. {@code sourceSequence} is the
     * engine's own sequence number of the last engine batch this one completes (node agents
     * bridging an engine's event stream send it; it is where they resume after a restart).
     */
    record Events(
            @NotNull @Min(0) @Max(63) Integer rank,
            @NotNull @Min(0) Long firstEventId,
            @NotNull @Size(min = 1, max = MAX_EVENTS) List<@Valid @NotNull Event> events,
            @Nullable @Min(0) Long sourceSequence) {

        Events(Integer rank, Long firstEventId, List<Event> events) {
            this(rank, firstEventId, events, null);
        }
    }

    enum EventType {
        STORED,
        REMOVED,
        NATIVE_CACHE_CLEARED
    }

    record Event(
            @NotNull EventType type,
            @Nullable List<@Valid @NotNull Block> blocks,
            @Nullable List<@NotNull String> seqHashes) {}

    /**
     * One stored block. In event batches {@code position} may be left out: a root (no parent) is at
     * 0, any other block one below its parent, stored earlier on the rank or earlier in the batch
     * (engines' own streams carry no positions). Snapshots always carry positions.
     */
    record Block(
            @NotNull String seqHash,
            @Nullable String parentHash,
            @Nullable @Min(0) @Max(100_000_000) Integer position,
            @NotNull @Min(0) Integer slot,
            @Nullable @Size(max = 256) String mmLineage) {

        Block at(int derived) {
            return new Block(seqHash, parentHash, derived, slot, mmLineage);
        }

        InventoryBlock parse(String where) {
            if (position == null) {
                throw new io.kvreuse.error.InvalidRequestException(
                        "invalid-block", "Invalid inventory batch", where + ": a snapshot's blocks carry positions");
            }
            Long parent = parentHash == null ? null : SeqHash.parse(parentHash, where + ".parentHash");
            String lineage = mmLineage == null || mmLineage.isBlank() || mmLineage.equals("NONE") ? null : mmLineage;
            return new InventoryBlock(SeqHash.parse(seqHash, where + ".seqHash"), parent, position, slot, lineage);
        }
    }

    /**
     * Where the engine publishes its own KV events, one stream per rank (docs/kv-events.md).
     * {@code allBlocksCleared} has no default: the engine says whether its stream is the native cache's
     * or the retained bank's own.
     */
    record EventSourceRequest(
            @NotNull io.kvreuse.protocol.KvEventFormat format,
            @NotNull io.kvreuse.protocol.ClearPolicy allBlocksCleared,
            @NotNull @Size(min = 1, max = 64) List<@Valid @NotNull StreamRequest> ranks) {}

    record StreamRequest(
            @NotNull @Min(0) @Max(63) Integer rank,
            @NotBlank @Size(max = 300) String endpoint,
            @Nullable @Size(min = 1, max = 300) String replayEndpoint,
            @Nullable @Size(max = 256) String topic) {}

    /** {@code POST /banks/{bankId}/parts/{rank}/stream-breaks}, as the agent reports a lost stream. */
    record StreamBreak(
            @NotNull io.kvreuse.protocol.StreamBreak.Kind kind,
            @NotNull @Min(-1) Long expectedSequence,
            @NotNull @Min(-1) Long receivedSequence) {}

    record Snapshot(
            @NotNull @Min(0) Long throughEventId,
            @NotNull List<@Valid @NotNull Block> blocks,
            @Nullable @Min(0) Long sourceSequence) {}
}
