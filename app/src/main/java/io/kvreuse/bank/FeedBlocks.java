package io.kvreuse.bank;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The STORE and REMOVE ops of a batch's feed row in their binary form (column {@code
 * inventory_change.blocks}, V91): six of PostgreSQL's binary arrays one after the other, as {@code
 * array_send} writes them: the stored blocks' hashes, parents, positions and slots, their lineages,
 * then the removed hashes. The STOREs come first, as in a JSON feed row.
 */
final class FeedBlocks {

    private static final int INT8 = 20;
    private static final int INT4 = 23;
    private static final int TEXT = 25;

    private FeedBlocks() {}

    /** Every op of the row, STOREs then REMOVEs; a malformed row is an {@link IllegalStateException}. */
    static List<IndexOp> read(byte[] row) {
        ByteBuffer in = ByteBuffer.wrap(row);
        try {
            Long[] hashes = longs(in);
            Long[] parents = longs(in);
            int[] positions = ints(in);
            int[] slots = ints(in);
            @Nullable String[] lineages = texts(in);
            Long[] removed = longs(in);
            int n = hashes.length;
            if (parents.length != n
                    || positions.length != n
                    || slots.length != n
                    || lineages.length != n
                    || in.hasRemaining()) {
                throw malformed("its arrays differ in length or bytes are left over");
            }
            List<IndexOp> ops = new ArrayList<>(n + removed.length);
            for (int i = 0; i < n; i++) {
                if (hashes[i] == null) {
                    throw malformed("a stored hash is NULL");
                }
                ops.add(new IndexOp(IndexOp.Kind.STORE, hashes[i], parents[i], positions[i], slots[i], lineages[i], 0));
            }
            for (Long hash : removed) {
                if (hash == null) {
                    throw malformed("a removed hash is NULL");
                }
                ops.add(IndexOp.remove(hash));
            }
            return ops;
        } catch (java.nio.BufferUnderflowException e) {
            throw malformed("it ends early");
        }
    }

    /** The element count of the next array, its header checked and consumed. */
    private static int header(ByteBuffer in, int elementType) {
        int dims = in.getInt();
        in.getInt(); // has NULLs: every element's length says it anyway
        int type = in.getInt();
        if (dims == 0) {
            return 0;
        }
        if (dims != 1 || type != elementType) {
            throw malformed("an array of " + dims + " dimensions or of type " + type + " where " + elementType);
        }
        int length = in.getInt();
        in.getInt(); // lower bound
        if (length < 0 || length > in.remaining() / 4) {
            throw malformed("an array of " + length + " elements");
        }
        return length;
    }

    private static Long[] longs(ByteBuffer in) {
        Long[] values = new Long[header(in, INT8)];
        for (int i = 0; i < values.length; i++) {
            int size = in.getInt();
            if (size == 8) {
                values[i] = in.getLong();
            } else if (size != -1) {
                throw malformed("a bigint of " + size + " bytes");
            }
        }
        return values;
    }

    private static int[] ints(ByteBuffer in) {
        int[] values = new int[header(in, INT4)];
        for (int i = 0; i < values.length; i++) {
            if (in.getInt() != 4) {
                throw malformed("an integer that is NULL or not 4 bytes");
            }
            values[i] = in.getInt();
        }
        return values;
    }

    private static @Nullable String[] texts(ByteBuffer in) {
        @Nullable String[] values = new String[header(in, TEXT)];
        for (int i = 0; i < values.length; i++) {
            int size = in.getInt();
            if (size >= 0) {
                if (size > in.remaining()) {
                    throw malformed("a text of " + size + " bytes");
                }
                values[i] = new String(in.array(), in.position(), size, StandardCharsets.UTF_8);
                in.position(in.position() + size);
            } else if (size != -1) {
                throw malformed("a text of " + size + " bytes");
            }
        }
        return values;
    }

    private static IllegalStateException malformed(String why) {
        return new IllegalStateException("malformed inventory feed row: " + why);
    }
}
