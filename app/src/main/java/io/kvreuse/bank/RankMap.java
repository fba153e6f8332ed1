package io.kvreuse.bank;

import java.util.Arrays;

/**
 * One rank of a bank as its slot pages hold it, in this replica's memory: each slot's hash and
 * position (a mirror of the pages, allocated 256 slots at a time as they are) and hash -> slot, for
 * the lookups by hash the write path needs and PostgreSQL no longer makes (V98). {@link #version} is
 * the rank's {@code page_version} the contents reflect. Not thread-safe: {@link BankMaps} guards it.
 */
final class RankMap {

    static final int PAGE = 256;
    private static final int EMPTY = -1;

    long version;
    private long[][] hashes = new long[0][];
    private int[][] positions = new int[0][];
    /** Open addressing, linear probing: keys and their slots ({@link #EMPTY} where no key is). */
    private long[] keys = new long[16];

    private int[] slots = filled(16);
    private int size;

    RankMap(long version) {
        this.version = version;
    }

    /** Loads one page as the database holds it (position -1: an empty slot). */
    void loadPage(int page, long[] pageHashes, int[] pagePositions) {
        for (int i = 0; i < pagePositions.length; i++) {
            if (pagePositions[i] >= 0) {
                store(page * PAGE + i, pageHashes[i], pagePositions[i]);
            }
        }
    }

    /** The slot the rank holds {@code hash} at, or -1. */
    int slotOf(long hash) {
        int i = find(hash);
        return i < 0 ? -1 : slots[i];
    }

    /** The position of the block at {@code slot}, or -1 when the slot is empty. */
    int positionAt(int slot) {
        int page = slot / PAGE;
        return page < positions.length && positions[page] != null ? positions[page][slot % PAGE] : -1;
    }

    int size() {
        return size;
    }

    /** Empties a slot: its block leaves the hash index too (if the index names that slot for it). */
    void clear(int slot) {
        int page = slot / PAGE;
        if (page >= positions.length || positions[page] == null || positions[page][slot % PAGE] < 0) {
            return;
        }
        long old = hashes[page][slot % PAGE];
        positions[page][slot % PAGE] = -1;
        int i = find(old);
        if (i >= 0 && slots[i] == slot) {
            delete(i);
        }
    }

    /** Writes a block at a slot (which the caller emptied first). */
    void store(int slot, long hash, int position) {
        int page = slot / PAGE;
        if (page >= positions.length) {
            int grown = Math.max(page + 1, positions.length * 2);
            positions = Arrays.copyOf(positions, grown);
            hashes = Arrays.copyOf(hashes, grown);
        }
        if (positions[page] == null) {
            positions[page] = filled(PAGE);
            hashes[page] = new long[PAGE];
        }
        hashes[page][slot % PAGE] = hash;
        positions[page][slot % PAGE] = position;
        put(hash, slot);
    }

    private static int[] filled(int n) {
        int[] a = new int[n];
        Arrays.fill(a, EMPTY);
        return a;
    }

    private static int home(long key, int capacity) {
        long h = key;
        h ^= h >>> 33;
        h *= 0xff51afd7ed558ccdL;
        h ^= h >>> 33;
        h *= 0xc4ceb9fe1a85ec53L;
        h ^= h >>> 33;
        return (int) h & (capacity - 1);
    }

    private int find(long key) {
        int mask = keys.length - 1;
        for (int i = home(key, keys.length); slots[i] != EMPTY; i = (i + 1) & mask) {
            if (keys[i] == key) {
                return i;
            }
        }
        return -1;
    }

    private void put(long key, int slot) {
        if ((size + 1) * 2 > keys.length) {
            grow();
        }
        int mask = keys.length - 1;
        int i = home(key, keys.length);
        while (slots[i] != EMPTY) {
            if (keys[i] == key) {
                slots[i] = slot;
                return;
            }
            i = (i + 1) & mask;
        }
        keys[i] = key;
        slots[i] = slot;
        size++;
    }

    /** Removes entry {@code i}, shifting back the entries of its probe run so no lookup misses them. */
    private void delete(int i) {
        int mask = keys.length - 1;
        int hole = i;
        for (int j = (i + 1) & mask; slots[j] != EMPTY; j = (j + 1) & mask) {
            int want = home(keys[j], keys.length);
            // j's entry may move into the hole when its home is not inside (hole, j]
            if (((j - want) & mask) >= ((j - hole) & mask)) {
                keys[hole] = keys[j];
                slots[hole] = slots[j];
                hole = j;
            }
        }
        slots[hole] = EMPTY;
        size--;
    }

    private void grow() {
        long[] oldKeys = keys;
        int[] oldSlots = slots;
        keys = new long[oldKeys.length * 2];
        slots = filled(oldKeys.length * 2);
        size = 0;
        for (int i = 0; i < oldKeys.length; i++) {
            if (oldSlots[i] != EMPTY) {
                put(oldKeys[i], oldSlots[i]);
            }
        }
    }
}
