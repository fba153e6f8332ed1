package io.kvreuse.bank;

import io.kvreuse.error.InvalidRequestException;
import io.kvreuse.error.ProblemType;
import io.kvreuse.hash.SeqHash;
import io.swagger.v3.oas.annotations.media.Schema;
import jakarta.validation.Valid;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Size;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/** Request bodies of the bank API, as engines send them (hashes as strings). */
public final class InventoryRequests {

    /** Largest number of events in one batch. */
    static final int MAX_EVENTS = 1024;
    /** Largest number of blocks and removed hashes, summed over one batch. */
    static final int MAX_BATCH_ITEMS = 16_384;
    /** Largest block position. */
    static final int MAX_POSITION = 100_000_000;
    /** Longest multimodal lineage. */
    static final int MAX_LINEAGE = 256;

    private InventoryRequests() {}

    @Schema(
            name = "CreateBankRequest",
            description = "A retained bank for a decode incarnation: its capacity and one part per rank")
    public record CreateBank(
            @Schema(description = "Blocks the bank holds per rank (1–10,000,000)") @NotNull @Min(1) @Max(10_000_000)
            Integer capacityBlocks,

            @Schema(description = "One part per rank (1–64)") @NotNull @Size(min = 1, max = 64)
            List<@Valid @NotNull Part> parts,

            @Schema(
                    description =
                            "Where the engine publishes its own KV event streams (absent: it calls the events API)")
            @Valid
            @Nullable
            EventSourceRequest eventSource) {

        CreateBank(Integer capacityBlocks, List<Part> parts) {
            this(capacityBlocks, parts, null);
        }
    }

    @Schema(name = "BankPartRequest", description = "One rank's part of a bank: the region that holds its blocks")
    record Part(
            @Schema(description = "Tensor-parallel rank") @NotNull @Min(0) @Max(63)
            Integer rank,

            @Schema(
                    description =
                            "The engine's memory region: shm://<name> (emulation) or cuda-ipc://<gpuOrdinal>/<handle>?size=<bytes>")
            @NotBlank
            @Size(max = 512)
            @io.kvreuse.protocol.RegionReference
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

    /**
     * One ordered batch of a rank. Event ids count from 0 or from 1: a rank's first batch may start
     * at either, every later one continues where the rank stands. {@code sourceSequence} is the
     * engine's own sequence number of the last engine batch this one completes (node agents
     * bridging an engine's event stream send it; it is where they resume after a restart).
     */
    @Schema(
            name = "InventoryEventBatch",
            description = "An ordered batch of one rank's inventory events, ids consecutive from firstEventId")
    record Events(
            @Schema(description = "Tensor-parallel rank") @NotNull @Min(0) @Max(63)
            Integer rank,

            @Schema(
                    description =
                            "Id of the first event (a rank's first batch starts at 0 or 1); the others follow consecutively")
            @NotNull
            @Min(0)
            Long firstEventId,

            @Schema(description = "The events (1–1,024)") @NotNull @Size(min = 1, max = MAX_EVENTS)
            List<@Valid @NotNull Event> events,

            @Schema(
                    description =
                            "The engine's own sequence number of the last stream batch this completes (sent by node agents bridging a stream)")
            @Nullable
            @Min(0)
            Long sourceSequence) {

        Events(Integer rank, Long firstEventId, List<Event> events) {
            this(rank, firstEventId, events, null);
        }
    }

    /**
     * The constraints of every block of an event batch, checked by hand: a batch carries up to
     * 16,384 blocks, and bean validation cascading into each costs more than the rest of the
     * request's parsing. A violation is the same {@code invalid-request} problem, with the same
     * fields and messages, as bean validation gives.
     */
    static void checkBlocks(Events batch) {
        List<Map<String, String>> errors = new ArrayList<>();
        List<Event> events = batch.events();
        for (int i = 0; events != null && i < events.size(); i++) {
            List<Block> blocks = events.get(i) == null ? null : events.get(i).blocks();
            for (int j = 0; blocks != null && j < blocks.size(); j++) {
                Block b = blocks.get(j);
                if (b != null
                        && b.seqHash() != null
                        && b.slot() != null
                        && b.slot() >= 0
                        && (b.position() == null || (b.position() >= 0 && b.position() <= MAX_POSITION))
                        && (b.mmLineage() == null || b.mmLineage().length() <= MAX_LINEAGE)) {
                    continue; // the usual block: its name is only put together for an error
                }
                String at = "events[" + i + "].blocks[" + j + "]";
                if (b == null) {
                    errors.add(fieldError(at, "must not be null"));
                    continue;
                }
                if (b.seqHash() == null) {
                    errors.add(fieldError(at + ".seqHash", "must not be null"));
                }
                if (b.position() != null && b.position() < 0) {
                    errors.add(fieldError(at + ".position", "must be greater than or equal to 0"));
                }
                if (b.position() != null && b.position() > MAX_POSITION) {
                    errors.add(fieldError(at + ".position", "must be less than or equal to " + MAX_POSITION));
                }
                if (b.slot() == null) {
                    errors.add(fieldError(at + ".slot", "must not be null"));
                } else if (b.slot() < 0) {
                    errors.add(fieldError(at + ".slot", "must be greater than or equal to 0"));
                }
                if (b.mmLineage() != null && b.mmLineage().length() > MAX_LINEAGE) {
                    errors.add(fieldError(at + ".mmLineage", "size must be between 0 and " + MAX_LINEAGE));
                }
            }
        }
        if (!errors.isEmpty()) {
            String detail =
                    errors.getFirst().get("field") + ": " + errors.getFirst().get("message")
                            + (errors.size() > 1 ? " (and " + (errors.size() - 1) + " more)" : "");
            throw new InvalidRequestException(ProblemType.INVALID_REQUEST, detail).with("errors", errors);
        }
    }

    private static Map<String, String> fieldError(String field, String message) {
        Map<String, String> error = new LinkedHashMap<>();
        error.put("field", field);
        error.put("message", message);
        return error;
    }

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
            List<Block> blocks,

            @Schema(description = "The hashes removed (REMOVED), u64 as decimal strings") @Nullable
            List<@NotNull String> seqHashes) {}

    /**
     * One stored block. In event batches {@code position} may be left out: a root (no parent) is at
     * 0, any other block one below its parent, stored earlier on the rank or earlier in the batch
     * (engines' own streams carry no positions). Snapshots always carry positions.
     */
    @Schema(name = "InventoryBlock", description = "A block held at a slot of the bank")
    record Block(
            @Schema(description = "The block's sequence hash, u64 as a decimal string (0x hex accepted)") @NotNull
            String seqHash,

            @Schema(description = "The previous block's hash (absent for a root)") @Nullable
            String parentHash,

            @Schema(
                    description =
                            "Position of the block in its chain, from 0; in event batches it may be left out (one below its parent)")
            @Nullable
            @Min(0)
            @Max(MAX_POSITION)
            Integer position,

            @Schema(description = "Slot of the bank that holds it") @NotNull @Min(0)
            Integer slot,

            @Schema(description = "Multimodal lineage the blocks belong to (absent: text only)")
            @Nullable
            @Size(max = MAX_LINEAGE)
            String mmLineage) {

        Block at(int derived) {
            return new Block(seqHash, parentHash, derived, slot, mmLineage);
        }

        /** The block as stored; errors name it {@code blocksPrefix + j + "]"} ("events[2].blocks[" + 7 + "]"). */
        InventoryBlock parse(String blocksPrefix, int j) {
            if (position == null) {
                throw new InvalidRequestException(
                        ProblemType.INVALID_BLOCK, blocksPrefix + j + "]: a snapshot's blocks carry positions");
            }
            Long parent = parentHash == null ? null : SeqHash.parse(parentHash, blocksPrefix, j, "].parentHash");
            String lineage = mmLineage == null || mmLineage.isBlank() || mmLineage.equals("NONE") ? null : mmLineage;
            return new InventoryBlock(
                    SeqHash.parse(seqHash, blocksPrefix, j, "].seqHash"), parent, position, slot, lineage);
        }
    }

    /**
     * Where the engine publishes its own KV events, one stream per rank (docs/kv-events.md).
     * {@code allBlocksCleared} has no default: the engine says whether its stream is the native cache's
     * or the retained bank's own.
     */
    @Schema(
            name = "EventSourceRequest",
            description = "Where an engine publishes its own KV event streams, one per rank")
    record EventSourceRequest(
            @Schema(description = "VLLM_KV_EVENTS or MOONCAKE_RFC1527") @NotNull
            io.kvreuse.protocol.KvEventFormat format,

            @Schema(
                    description =
                            "What AllBlocksCleared means: the native cache's clear, or a reset of the retained bank (no default)")
            @NotNull
            io.kvreuse.protocol.ClearPolicy allBlocksCleared,

            @Schema(description = "One stream per rank (1–64)") @NotNull @Size(min = 1, max = 64)
            List<@Valid @NotNull StreamRequest> ranks) {}

    @Schema(name = "EventStreamRequest", description = "One rank's event stream")
    record StreamRequest(
            @Schema(description = "Tensor-parallel rank") @NotNull @Min(0) @Max(63)
            Integer rank,

            @Schema(description = "The ZMQ PUB endpoint, e.g. tcp://host:5557") @NotBlank @Size(max = 300)
            String endpoint,

            @Schema(description = "The ZMQ ROUTER replay endpoint, if the engine offers replay")
            @Nullable
            @Size(min = 1, max = 300)
            String replayEndpoint,

            @Schema(description = "The topic to subscribe to (absent: every topic)") @Nullable @Size(max = 256)
            String topic) {}

    /** {@code POST /banks/{bankId}/parts/{rank}/stream-breaks}, as the agent reports a lost stream. */
    @Schema(name = "StreamBreakRequest", description = "A node agent's report that a rank's event stream broke")
    record StreamBreak(
            @Schema(
                    description =
                            "GAP (replay could not fill it), RESTART (the sequence went backwards) or REPLAYED (the replay filled it: for the record)")
            @NotNull
            io.kvreuse.protocol.StreamBreak.Kind kind,

            @Schema(description = "The sequence number the agent expected next (-1: none yet)") @NotNull @Min(-1)
            Long expectedSequence,

            @Schema(description = "The sequence number the agent received") @NotNull @Min(-1)
            Long receivedSequence) {}

    @Schema(name = "InventorySnapshot", description = "The whole content of one rank, replacing what was there")
    record Snapshot(
            @Schema(description = "The last event id the snapshot includes") @NotNull @Min(0)
            Long throughEventId,

            @Schema(description = "Every block the rank holds") @NotNull
            List<@Valid @NotNull Block> blocks,

            @Schema(description = "The engine's stream sequence number the snapshot includes (bridged streams)")
            @Nullable
            @Min(0)
            Long sourceSequence) {}
}
