package io.kvreuse.index;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import org.jspecify.annotations.Nullable;

/**
 * An open-addressing map from a u64 sequence hash to its {@link Holders} array, which carries its
 * own key so one slot is one reference. Linear probing; removal leaves a tombstone so that a
 * concurrent reader probing past a removed entry never misses a live one (backward-shift deletion
 * would move entries under its feet). One writer at a time; any number of lock-free readers: a
 * slot only ever receives a fully built array (release store, acquire load) and a resize publishes
 * a complete new table through a volatile field.
 */
final class HolderTable {

    private static final VarHandle SLOTS = MethodHandles.arrayElementVarHandle(int[][].class);
    private static final int[] TOMBSTONE = new int[Holders.HEADER];
    private static final int MIN_CAPACITY = 16;
    /** Resize when live entries plus tombstones pass this share of the slots. */
    private static final double MAX_LOAD = 0.6;
    /** A resize targets at most this share: capacity doubles as the table grows, so inserts stay amortised O(1). */
    private static final double TARGET_LOAD = 0.5;

    private volatile int[][] slots;

    private int live;
    private int tombstones;
    private long holderBytes;

    HolderTable() {
        this(MIN_CAPACITY);
    }

    HolderTable(int expectedEntries) {
        this.slots = new int[capacityFor(expectedEntries)][];
    }

    static long mix(long key) {
        // murmur3 fmix64: engine hashes are usually random, but tests and attackers need not be
        long h = key;
        h ^= h >>> 33;
        h *= 0xff51afd7ed558ccdL;
        h ^= h >>> 33;
        h *= 0xc4ceb9fe1a85ec53L;
        h ^= h >>> 33;
        return h;
    }

    @Nullable
    int[] get(long key) {
        int[][] table = slots;
        int mask = table.length - 1;
        for (int i = (int) mix(key) & mask; ; i = (i + 1) & mask) {
            int[] holders = (int[]) SLOTS.getAcquire(table, i);
            if (holders == null) {
                return null;
            }
            if (holders != TOMBSTONE && Holders.key(holders) == key) {
                return holders;
            }
        }
    }

    /**
     * Looks up {@code keys[from..to)} into {@code out[0..to-from)}. First loads every home slot, then
     * checks them: the loads of each pass are independent, so their cache misses overlap instead of
     * being paid one after another as a loop of {@link #get} would.
     */
    void getAll(long[] keys, int from, int to, int[][] out) {
        int[][] table = slots;
        int mask = table.length - 1;
        for (int i = from; i < to; i++) {
            out[i - from] = (int[]) SLOTS.getAcquire(table, (int) mix(keys[i]) & mask);
        }
        for (int i = from; i < to; i++) {
            int[] home = out[i - from];
            if (home != null && (home == TOMBSTONE || Holders.key(home) != keys[i])) {
                out[i - from] = probe(table, keys[i], ((int) mix(keys[i]) + 1) & mask);
            }
        }
    }

    /**
     * Looks up {@code keys[at[i]]} into {@code out[i]} for {@code i < count}, overlapping the cache
     * misses of the independent probes as {@link #getAll} does.
     */
    void getAt(long[] keys, int[] at, int count, int[][] out) {
        int[][] table = slots;
        int mask = table.length - 1;
        for (int i = 0; i < count; i++) {
            out[i] = (int[]) SLOTS.getAcquire(table, (int) mix(keys[at[i]]) & mask);
        }
        for (int i = 0; i < count; i++) {
            int[] home = out[i];
            long key = keys[at[i]];
            if (home != null && (home == TOMBSTONE || Holders.key(home) != key)) {
                out[i] = probe(table, key, ((int) mix(key) + 1) & mask);
            }
        }
    }

    /**
     * Returns the array of {@code keys[at[0]]}, having also loaded the home slots of
     * {@code keys[at[1..count)]} (into {@code out[1..count)}, unresolved), so that their cache misses overlap this one and a later
     * {@link #getAt} of the same keys finds them in cache.
     */
    int @Nullable [] getFirst(long[] keys, int[] at, int count, int[][] out) {
        int[][] table = slots;
        int mask = table.length - 1;
        for (int i = 1; i < count; i++) {
            out[i] = (int[]) SLOTS.getAcquire(table, (int) mix(keys[at[i]]) & mask);
        }
        long key = keys[at[0]];
        int[] home = (int[]) SLOTS.getAcquire(table, (int) mix(key) & mask);
        if (home != null && (home == TOMBSTONE || Holders.key(home) != key)) {
            home = probe(table, key, ((int) mix(key) + 1) & mask);
        }
        return home;
    }

    private static int @Nullable [] probe(int[][] table, long key, int start) {
        int mask = table.length - 1;
        for (int i = start; ; i = (i + 1) & mask) {
            int[] holders = (int[]) SLOTS.getAcquire(table, i);
            if (holders == null) {
                return null;
            }
            if (holders != TOMBSTONE && Holders.key(holders) == key) {
                return holders;
            }
        }
    }

    /** How many slots a lookup of {@code key} reads (its home slot and any it probes past), negated if absent; for benchmarks. */
    int slotsRead(long key) {
        int[][] table = slots;
        int mask = table.length - 1;
        int read = 1;
        for (int i = (int) mix(key) & mask; ; i = (i + 1) & mask, read++) {
            int[] holders = table[i];
            if (holders == null) {
                return -read;
            }
            if (holders != TOMBSTONE && Holders.key(holders) == key) {
                return read;
            }
        }
    }

    /** Inserts or replaces the array of {@code Holders.key(holders)}. Writer only. */
    void put(int[] holders) {
        long key = Holders.key(holders);
        int[][] table = slots;
        int mask = table.length - 1;
        int free = -1;
        for (int i = (int) mix(key) & mask; ; i = (i + 1) & mask) {
            int[] current = table[i];
            if (current == null) {
                if (free < 0) {
                    free = i;
                } else {
                    tombstones--;
                }
                SLOTS.setRelease(table, free, holders);
                live++;
                holderBytes += bytes(holders);
                growIfNeeded();
                return;
            }
            if (current == TOMBSTONE) {
                if (free < 0) {
                    free = i;
                }
            } else if (Holders.key(current) == key) {
                SLOTS.setRelease(table, i, holders);
                holderBytes += bytes(holders) - bytes(current);
                return;
            }
        }
    }

    /** Removes the key if present. Writer only. */
    boolean remove(long key) {
        int[][] table = slots;
        int mask = table.length - 1;
        for (int i = (int) mix(key) & mask; ; i = (i + 1) & mask) {
            int[] current = table[i];
            if (current == null) {
                return false;
            }
            if (current != TOMBSTONE && Holders.key(current) == key) {
                SLOTS.setRelease(table, i, TOMBSTONE);
                live--;
                holderBytes -= bytes(current);
                tombstones++;
                growIfNeeded();
                return true;
            }
        }
    }

    int size() {
        return live;
    }

    int capacity() {
        return slots.length;
    }

    int tombstones() {
        return tombstones;
    }

    /** Heap retained by the holder arrays (compressed-oops object layout). */
    long holderBytes() {
        return holderBytes;
    }

    private static long bytes(int[] holders) {
        return (16L + 4L * holders.length + 7) & ~7L;
    }

    private void growIfNeeded() {
        int[][] table = slots;
        if (live + tombstones > table.length * MAX_LOAD) {
            rehash(capacityFor(live));
        }
    }

    private void rehash(int capacity) {
        int[][] old = slots;
        int[][] table = new int[capacity][];
        int mask = capacity - 1;
        for (int[] holders : old) {
            if (holders != null && holders != TOMBSTONE) {
                int i = (int) mix(Holders.key(holders)) & mask;
                while (table[i] != null) {
                    i = (i + 1) & mask;
                }
                table[i] = holders;
            }
        }
        tombstones = 0;
        slots = table;
    }

    private static int capacityFor(int entries) {
        long wanted = (long) Math.ceil(Math.max(entries, 1) / TARGET_LOAD);
        long capacity = Long.highestOneBit(Math.max(wanted, MIN_CAPACITY) - 1) << 1;
        if (capacity > 1 << 30) {
            throw new IllegalStateException("prefix index table cannot hold " + entries + " hashes");
        }
        return (int) capacity;
    }
}
