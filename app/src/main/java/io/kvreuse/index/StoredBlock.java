package io.kvreuse.index;

import org.jspecify.annotations.Nullable;

/**
 * A sealed block now held by a bank.
 *
 * @param seqHash the u64 sequence hash, chained from the root
 * @param parentHash the parent's sequence hash; absent exactly for the root block (position 0)
 * @param position distance from the root; a block only counts when it sits at its chain index
 * @param slot the block's index in the bank, below the bank's capacity
 * @param mmLineage null for NONE, else the digest of the multimodal content the block depends on
 */
public record StoredBlock(
        long seqHash,
        @Nullable Long parentHash,
        int position,
        int slot,
        @Nullable String mmLineage) implements BlockEvent {

    public StoredBlock {
        if (position < 0) {
            throw new IllegalArgumentException("position must be >= 0, was " + position);
        }
        if (slot < 0) {
            throw new IllegalArgumentException("slot must be >= 0, was " + slot);
        }
        if ((parentHash == null) != (position == 0)) {
            throw new IllegalArgumentException("a block has no parent hash exactly when it is the root (position 0)");
        }
        if (mmLineage != null && mmLineage.isEmpty()) {
            throw new IllegalArgumentException("an mmLineage, when given, must not be empty");
        }
    }
}
