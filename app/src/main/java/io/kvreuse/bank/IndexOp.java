package io.kvreuse.bank;

import com.fasterxml.jackson.annotation.JsonFormat;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import org.jspecify.annotations.Nullable;

/**
 * One change to a bank's entry in the in-memory prefix index, as carried by the inventory change
 * feed, written as a compact JSON array. A block is in the index only when every rank of the bank
 * holds it at the same slot.
 */
@JsonFormat(shape = JsonFormat.Shape.ARRAY)
@JsonPropertyOrder({"op", "seqHash", "parentHash", "position", "slot", "mmLineage", "epoch"})
public record IndexOp(
        Kind op,
        long seqHash,
        @Nullable Long parentHash,
        int position,
        int slot,
        @Nullable String mmLineage,
        long epoch) {

    /** What the op does to the bank's index entry. */
    public enum Kind {
        STORE,
        REMOVE,
        PUBLISH,
        UNPUBLISH,
        RESET,
        RELOAD,
        DROP
    }

    static IndexOp store(InventoryBlock b) {
        return new IndexOp(Kind.STORE, b.seqHash(), b.parentHash(), b.position(), b.slot(), b.mmLineage(), 0);
    }

    static IndexOp remove(long seqHash) {
        return new IndexOp(Kind.REMOVE, seqHash, null, 0, 0, null, 0);
    }

    static IndexOp of(Kind kind, long epoch) {
        return new IndexOp(kind, 0, null, 0, 0, null, epoch);
    }
}
