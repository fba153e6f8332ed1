package io.kvreuse.bank;

import io.kvreuse.error.InvalidRequestException;
import io.kvreuse.error.ProblemType;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The net effect of an ordered inventory batch on one rank: which blocks end up stored where, and
 * which hashes end up removed. Applying the net effect equals applying the events one by one, and
 * lets the store write a batch with a handful of set-based statements. Every rule is checked here,
 * before anything is applied.
 */
final class BatchEffect {

    final Map<Long, InventoryBlock> stored = new LinkedHashMap<>();
    final Set<Long> removed = new HashSet<>();
    int nativeClears;
    int events;
    /** The highest slot any block of the batch names, applied or not (-1: none). */
    int maxSlot = -1;

    private final Map<Integer, Long> slotHolder = new HashMap<>();
    private final int capacity;
    private boolean placed;

    private BatchEffect(int capacity) {
        this.capacity = capacity;
    }

    /** The net effect of events {@code skip..} of the batch (earlier ones were applied before). */
    static BatchEffect of(InventoryRequests.Events batch, int skip, int capacity) {
        return of(batch, skip, capacity, false);
    }

    /**
     * As {@link #of(InventoryRequests.Events, int, int)} for a batch whose positions {@link BlockPositions}
     * filled: a STORED event may then have lost every block (none could be placed) and still counts.
     */
    static BatchEffect of(InventoryRequests.Events batch, int skip, int capacity, boolean placed) {
        BatchEffect effect = new BatchEffect(capacity);
        effect.placed = placed;
        int items = 0;
        for (var event : batch.events()) {
            items += event.blocks() == null ? 0 : event.blocks().size();
            items += event.seqHashes() == null ? 0 : event.seqHashes().size();
        }
        if (items > InventoryRequests.MAX_BATCH_ITEMS) {
            throw invalid(
                    ProblemType.BATCH_TOO_LARGE,
                    "a batch carries at most " + InventoryRequests.MAX_BATCH_ITEMS
                            + " blocks and removed hashes; this one carries " + items);
        }
        List<InventoryRequests.Event> events = batch.events();
        for (int i = 0; i < events.size(); i++) {
            effect.apply(events.get(i), "events[" + i + "]", i >= skip);
        }
        return effect;
    }

    /** A snapshot's blocks: the whole inventory of one rank. */
    static BatchEffect ofSnapshot(List<InventoryRequests.Block> blocks, int capacity) {
        BatchEffect effect = new BatchEffect(capacity);
        for (int i = 0; i < blocks.size(); i++) {
            effect.store(parse(blocks.get(i), "blocks[", i), "blocks[", i);
        }
        return effect;
    }

    // Validation runs over every event, applied or not, so a retried batch is checked the same way.
    private void apply(InventoryRequests.Event event, String where, boolean counts) {
        switch (event.type()) {
            case STORED -> {
                if (event.blocks() == null || (event.blocks().isEmpty() && !placed) || event.seqHashes() != null) {
                    throw invalid(
                            ProblemType.INVALID_EVENT, where + ": a STORED event carries blocks and nothing else");
                }
                String blocks = where + ".blocks[";
                for (int j = 0; j < event.blocks().size(); j++) {
                    InventoryBlock block = parse(event.blocks().get(j), blocks, j);
                    if (counts) {
                        store(block, blocks, j);
                    } else {
                        checkShape(block, blocks, j);
                    }
                }
            }
            case REMOVED -> {
                if (event.seqHashes() == null || event.seqHashes().isEmpty() || event.blocks() != null) {
                    throw invalid(
                            ProblemType.INVALID_EVENT, where + ": a REMOVED event carries seqHashes and nothing else");
                }
                String hashes = where + ".seqHashes[";
                for (int j = 0; j < event.seqHashes().size(); j++) {
                    long hash = io.kvreuse.hash.SeqHash.parse(event.seqHashes().get(j), hashes, j, "]");
                    if (counts) {
                        remove(hash);
                    }
                }
            }
            case NATIVE_CACHE_CLEARED -> {
                if (event.blocks() != null || event.seqHashes() != null) {
                    throw invalid(ProblemType.INVALID_EVENT, where + ": a NATIVE_CACHE_CLEARED event carries nothing");
                }
                if (counts) {
                    nativeClears++;
                }
            }
        }
        if (counts) {
            events++;
        }
    }

    // A block's name for an error ("events[2].blocks[" + 7 + "]"), put together only when there is an
    // error: a batch carries thousands of blocks.
    private static String at(String blocksPrefix, int j) {
        return blocksPrefix + j + "]";
    }

    private void store(InventoryBlock block, String prefix, int j) {
        checkShape(block, prefix, j);
        Long holder = slotHolder.get(block.slot());
        if (holder != null && holder != block.seqHash()) {
            throw invalid(
                    ProblemType.DUPLICATE_SLOT,
                    at(prefix, j) + ": slot " + block.slot() + " already holds another block of this batch");
        }
        InventoryBlock previous = stored.get(block.seqHash());
        if (previous != null && previous.slot() != block.slot()) {
            slotHolder.remove(previous.slot());
        }
        if (block.parentHash() != null) {
            InventoryBlock parent = stored.get(block.parentHash());
            if (parent != null && parent.position() != block.position() - 1) {
                throw invalid(
                        ProblemType.POSITION_CONTRADICTS_PARENT,
                        at(prefix, j) + ": position " + block.position()
                                + " but its parent in this batch is at position " + parent.position());
            }
        }
        stored.put(block.seqHash(), block);
        slotHolder.put(block.slot(), block.seqHash());
        removed.remove(block.seqHash());
    }

    private void checkShape(InventoryBlock block, String prefix, int j) {
        maxSlot = Math.max(maxSlot, block.slot());
        if (block.slot() >= capacity) {
            throw invalid(
                    ProblemType.SLOT_OUT_OF_RANGE,
                    at(prefix, j) + ": slot " + block.slot() + " is outside the bank's capacity of " + capacity);
        }
        if ((block.position() == 0) != (block.parentHash() == null)) {
            throw invalid(
                    ProblemType.POSITION_CONTRADICTS_PARENT,
                    at(prefix, j) + ": a root block (position 0) has no parentHash, every other block has one");
        }
    }

    private void remove(long hash) {
        InventoryBlock previous = stored.remove(hash);
        if (previous != null) {
            slotHolder.remove(previous.slot());
        }
        removed.add(hash);
    }

    /** Every hash whose eligibility may change through this effect. */
    List<Long> touched() {
        List<Long> all = new ArrayList<>(stored.keySet());
        all.addAll(removed);
        return all;
    }

    private static InventoryBlock parse(
            InventoryRequests.@org.jspecify.annotations.Nullable Block block, String prefix, int j) {
        if (block == null) {
            throw invalid(ProblemType.INVALID_BLOCK, at(prefix, j) + ": a block, not null");
        }
        return block.parse(prefix, j);
    }

    private static InvalidRequestException invalid(ProblemType type, String detail) {
        return new InvalidRequestException(type, detail);
    }
}
