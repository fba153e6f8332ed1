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
     * Looks up {@code keys[at[i]]} into {@code out[i]} for {@code i < count} ({@code next} is scratch
     * of the same size). The probes are independent, so their cache misses are made to overlap
     * instead of being paid one after another as a loop of {@link #get} would: one pass loads every
     * key's home slot and the slot after it (usually the same cache line), a second touches the
     * arrays found there (so a key displaced by one slot, the common collision at this load, costs
     * no extra dependent miss), and a third matches the keys, probing further only past both.
     * Returns a value of the touched words that the caller should keep, so the touching pass stays.
     */
    int getAt(long[] keys, int[] at, int count, int[][] out, int[][] next) {
        int[][] table = slots;
        load(table, keys, at, 0, count, out, next);
        int touched = touch(out, next, 0, count);
        for (int i = 0; i < count; i++) {
            out[i] = resolve(table, keys[at[i]], out[i], next[i]);
        }
        return touched;
    }

    /**
     * Returns the array of {@code keys[at[0]]}, having also loaded the slots of
     * {@code keys[at[1..count)]} and touched their arrays (as {@link #getAt} does, leaving
     * {@code out[1..count)} unresolved), so that their cache misses overlap this one and a later
     * {@link #getAt} of the same keys finds them in cache. The touched words are added to
     * {@code sink[0]}.
     */
    int @Nullable [] getFirst(long[] keys, int[] at, int count, int[][] out, int[][] next, int[] sink) {
        int[][] table = slots;
        load(table, keys, at, 0, count, out, next);
        sink[0] += touch(out, next, 1, count);
        return resolve(table, keys[at[0]], out[0], next[0]);
    }

    /** The home slot and the one after it of each key, with acquire semantics (plain loads, then one fence). */
    private static void load(int[][] table, long[] keys, int[] at, int from, int count, int[][] out, int[][] next) {
        int mask = table.length - 1;
        for (int i = from; i < count; i++) {
            int home = (int) mix(keys[at[i]]) & mask;
            out[i] = table[home];
            next[i] = table[(home + 1) & mask];
        }
        VarHandle.acquireFence();
    }

    private static int touch(int[][] out, int[][] next, int from, int count) {
        int touched = 0;
        for (int i = from; i < count; i++) {
            int[] home = out[i];
            int[] after = next[i];
            if (home != null) {
                touched += home[1];
            }
            if (after != null) {
                touched += after[1];
            }
        }
        return touched;
    }

    /** The array of {@code key}, given its home slot's array and the next slot's. */
    private static int @Nullable [] resolve(int[][] table, long key, int @Nullable [] home, int @Nullable [] after) {
        if (home == null) {
            return null;
        }
        if (home != TOMBSTONE && Holders.key(home) == key) {
            return home;
        }
        if (after == null) {
            return null;
        }
        if (after != TOMBSTONE && Holders.key(after) == key) {
            return after;
        }
        return probe(table, key, ((int) mix(key) + 2) & (table.length - 1));
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
