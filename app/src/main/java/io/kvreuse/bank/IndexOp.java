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

    /**
     * The ops of one feed row, read token by token: the same result as binding {@code IndexOp[]},
     * without the property-based creator per op (a batch's row carries a thousand of them, and the
     * replica that committed it reads it back at once).
     */
    static java.util.List<IndexOp> readAll(tools.jackson.databind.json.JsonMapper json, byte[] array) {
        try (tools.jackson.core.JsonParser p = json.createParser(array)) {
            expect(p.nextToken(), tools.jackson.core.JsonToken.START_ARRAY);
            java.util.List<IndexOp> ops = new java.util.ArrayList<>();
            while (p.nextToken() == tools.jackson.core.JsonToken.START_ARRAY) {
                expect(p.nextToken(), tools.jackson.core.JsonToken.VALUE_STRING);
                Kind kind = Kind.valueOf(p.getString());
                long seqHash = longAt(p);
                Long parent = p.nextToken() == tools.jackson.core.JsonToken.VALUE_NULL ? null : number(p);
                int position = Math.toIntExact(longAt(p));
                int slot = Math.toIntExact(longAt(p));
                String lineage = p.nextToken() == tools.jackson.core.JsonToken.VALUE_NULL ? null : text(p);
                long epoch = longAt(p);
                expect(p.nextToken(), tools.jackson.core.JsonToken.END_ARRAY);
                ops.add(new IndexOp(kind, seqHash, parent, position, slot, lineage, epoch));
            }
            expect(p.currentToken(), tools.jackson.core.JsonToken.END_ARRAY);
            return ops;
        }
    }

    private static long longAt(tools.jackson.core.JsonParser p) {
        p.nextToken();
        return number(p);
    }

    private static long number(tools.jackson.core.JsonParser p) {
        expect(p.currentToken(), tools.jackson.core.JsonToken.VALUE_NUMBER_INT);
        return p.getLongValue();
    }

    private static String text(tools.jackson.core.JsonParser p) {
        expect(p.currentToken(), tools.jackson.core.JsonToken.VALUE_STRING);
        return p.getString();
    }

    private static void expect(tools.jackson.core.@Nullable JsonToken found, tools.jackson.core.JsonToken wanted) {
        if (found != wanted) {
            throw new IllegalStateException("malformed inventory feed row: " + found + " where " + wanted);
        }
    }
}
