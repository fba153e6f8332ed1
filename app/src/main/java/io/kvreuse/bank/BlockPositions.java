package io.kvreuse.bank;

import io.kvreuse.hash.SeqHash;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;

/**
 * Places stored blocks that arrive without a position (engines' own event streams carry parent
 * hashes, not depths): a root is at 0, any other block one below its parent as stored earlier in
 * the batch or on the rank. A block whose parent is known nowhere cannot be placed; it is left out
 * and counted in the answer, never stored at a guessed position.
 */
@Component
class BlockPositions {

    /** The batch with every position filled, and how many blocks had to be left out. */
    record Placed(InventoryRequests.Events batch, int unplaced) {}

    private final RankMaps maps;

    BlockPositions(RankMaps maps) {
        this.maps = maps;
    }

    /** Inside the batch's transaction, holding the bank's lock: the rank's positions from its map. */
    Mono<Placed> place(UUID bankId, int rank, InventoryRequests.Events batch) {
        Set<Long> unknownParents = unknownParents(batch);
        if (unknownParents == null) {
            return Mono.just(new Placed(batch, 0));
        }
        if (unknownParents.isEmpty()) {
            return Mono.just(fill(batch, new HashMap<>()));
        }
        return maps.current(bankId).map(bank -> {
            Map<Long, Integer> known = new HashMap<>();
            for (long parent : unknownParents) {
                Integer position = bank.positionOf(rank, parent);
                if (position != null) {
                    known.put(parent, position);
                }
            }
            return fill(batch, known);
        });
    }

    /**
     * The batch placed from its own blocks alone, or null when some parent must be looked up on the
     * rank (then only {@link #place} inside the batch's transaction can place it).
     */
    static @org.jspecify.annotations.Nullable Placed placeWithinBatch(InventoryRequests.Events batch) {
        Set<Long> unknownParents = unknownParents(batch);
        if (unknownParents == null) {
            return new Placed(batch, 0);
        }
        return unknownParents.isEmpty() ? fill(batch, new HashMap<>()) : null;
    }

    /** Parents to look up on the rank; null when every block already carries its position. */
    private static Set<Long> unknownParents(InventoryRequests.Events batch) {
        if (everyPositionGiven(batch)) {
            return null;
        }
        Set<Long> inBatch = new HashSet<>();
        Set<Long> unknown = null;
        for (InventoryRequests.Event event : batch.events()) {
            if (event.blocks() == null) {
                continue;
            }
            for (int j = 0; j < event.blocks().size(); j++) {
                InventoryRequests.Block b = event.blocks().get(j);
                if (b == null) {
                    continue;
                }
                if (b.position() == null) {
                    if (unknown == null) {
                        unknown = new HashSet<>();
                    }
                    if (b.parentHash() != null) {
                        long parent = SeqHash.parse(b.parentHash(), "parentHash");
                        if (!inBatch.contains(parent)) {
                            unknown.add(parent);
                        }
                    }
                }
                inBatch.add(SeqHash.parse(b.seqHash(), "seqHash"));
            }
        }
        return unknown;
    }

    /** True when every stored block carries its position: nothing to look up or parse here. */
    private static boolean everyPositionGiven(InventoryRequests.Events batch) {
        for (InventoryRequests.Event event : batch.events()) {
            if (event.blocks() == null) {
                continue;
            }
            for (InventoryRequests.Block b : event.blocks()) {
                if (b != null && b.position() == null) {
                    return false;
                }
            }
        }
        return true;
    }

    private static Placed fill(InventoryRequests.Events batch, Map<Long, Integer> known) {
        int unplaced = 0;
        List<InventoryRequests.Event> events = new ArrayList<>(batch.events().size());
        for (InventoryRequests.Event event : batch.events()) {
            if (event.blocks() == null) {
                events.add(event);
                continue;
            }
            List<InventoryRequests.Block> blocks =
                    new ArrayList<>(event.blocks().size());
            for (InventoryRequests.Block b : event.blocks()) {
                if (b == null) {
                    blocks.add(null);
                    continue;
                }
                Integer position = b.position();
                if (position == null) {
                    Integer parent = b.parentHash() == null
                            ? Integer.valueOf(-1)
                            : known.get(SeqHash.parse(b.parentHash(), "parentHash"));
                    position = parent == null ? null : parent + 1;
                }
                if (position == null) {
                    unplaced++;
                    continue;
                }
                known.put(SeqHash.parse(b.seqHash(), "seqHash"), position);
                blocks.add(b.position() == null ? b.at(position) : b);
            }
            events.add(new InventoryRequests.Event(event.type(), blocks, event.seqHashes()));
        }
        return new Placed(
                new InventoryRequests.Events(batch.rank(), batch.firstEventId(), events, batch.sourceSequence()),
                unplaced);
    }
}
