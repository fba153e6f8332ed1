package io.kvreuse.bank;

import org.jspecify.annotations.Nullable;

/** One sealed block in a rank's inventory: where it sits in the chain and in the bank. */
public record InventoryBlock(
        long seqHash,
        @Nullable Long parentHash,
        int position,
        int slot,
        @Nullable String mmLineage) {}
