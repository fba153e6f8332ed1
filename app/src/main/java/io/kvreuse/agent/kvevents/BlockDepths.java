package io.kvreuse.agent.kvevents;

import java.util.Arrays;

/**
 * The positions (depths) of the blocks a rank stream forwarded, by hash: an open-addressing map of
 * primitive {@code long → int} (linear probing, deletion by backward shift), so remembering a block
 * costs no boxing. Any 64-bit hash is a key, 0 included. Not thread-safe: one receiver owns it.
 */
final class BlockDepths {

    private static final int NONE = -1;

    private long[] keys;
    private int[] depths; // depth + 1; 0 marks an empty cell
    private int size;
    private int mask;

    BlockDepths() {
        this(1024);
    }

    BlockDepths(int initialCapacity) {
        int cells = Integer.highestOneBit(Math.max(16, initialCapacity) * 2 - 1);
        keys = new long[cells];
        depths = new int[cells];
        mask = cells - 1;
    }

    int size() {
        return size;
    }

    /** The depth of {@code hash}, or -1 when it is not known. */
    int get(long hash) {
        for (int i = cell(hash); depths[i] != 0; i = (i + 1) & mask) {
            if (keys[i] == hash) {
                return depths[i] - 1;
            }
        }
        return NONE;
    }

    /** Remembers {@code hash} at {@code depth}; a depth outside 0..2^31-2 (an overflowed one) is not remembered. */
    void put(long hash, int depth) {
        if (depth < 0 || depth == Integer.MAX_VALUE) {
            return;
        }
        int i = cell(hash);
        for (; depths[i] != 0; i = (i + 1) & mask) {
            if (keys[i] == hash) {
                depths[i] = depth + 1;
                return;
            }
        }
        keys[i] = hash;
        depths[i] = depth + 1;
        if (++size * 2 > keys.length) {
            grow();
        }
    }

    void remove(long hash) {
        int i = cell(hash);
        while (depths[i] != 0 && keys[i] != hash) {
            i = (i + 1) & mask;
        }
        if (depths[i] == 0) {
            return;
        }
        size--;
        // backward shift: move later entries of the run into the hole when their home allows it
        int hole = i;
        for (int j = (hole + 1) & mask; depths[j] != 0; j = (j + 1) & mask) {
            int home = cell(keys[j]);
            if (((j - home) & mask) >= ((j - hole) & mask)) {
                keys[hole] = keys[j];
                depths[hole] = depths[j];
                hole = j;
            }
        }
        depths[hole] = 0;
    }

    void clear() {
        Arrays.fill(depths, 0);
        size = 0;
    }

    private int cell(long hash) {
        long h = hash * 0x9E3779B97F4A7C15L;
        return (int) (h ^ (h >>> 32)) & mask;
    }

    private void grow() {
        long[] oldKeys = keys;
        int[] oldDepths = depths;
        keys = new long[oldKeys.length * 2];
        depths = new int[oldKeys.length * 2];
        mask = keys.length - 1;
        for (int i = 0; i < oldKeys.length; i++) {
            if (oldDepths[i] != 0) {
                int j = cell(oldKeys[i]);
                while (depths[j] != 0) {
                    j = (j + 1) & mask;
                }
                keys[j] = oldKeys[i];
                depths[j] = oldDepths[i];
            }
        }
    }
}
