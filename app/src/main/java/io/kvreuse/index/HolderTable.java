package io.kvreuse.index;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import org.jspecify.annotations.Nullable;

/**
 * An open-addressing map from a u64 sequence hash to its {@link Holders} array, which carries its
 * own key. Linear probing over two parallel arrays: a slot's reference and a one-byte fingerprint
 * of the key it received (0 for a slot never used). A lookup scans the fingerprints, 64 to a cache
 * line, and dereferences a slot's array only when its fingerprint matches (1 in 255 for another
 * key), so a hash nobody holds costs the fingerprint line and no holder array, and a held one
 * costs its own array only. The capacity is not a power of two: the home slot comes from the
 * mixed key by a multiply-shift, so the table can run at 0.6–0.75 load, which pays for the
 * fingerprints (5 bytes per slot instead of 4 at load 0.3–0.6 before).
 *
 * <p>Removal leaves a tombstone (the reference; the fingerprint stays) so that a concurrent reader
 * probing past a removed entry never misses a live one. One writer at a time; any number of
 * lock-free readers: a slot receives its fingerprint and then a fully built array (release store);
 * a fingerprint is only ever 0 in a slot that never held anything, so a reader stops at 0 without
 * missing a key stored before the bank view it read; a slot's fingerprint may change (a tombstone
 * reused by another key) and a reader that reads it together with the slot's earlier array skips
 * that key, as if it had read the tombstone. A resize publishes a complete new table through a
 * volatile field.
 */
final class HolderTable {

    private static final VarHandle SLOTS = MethodHandles.arrayElementVarHandle(int[][].class);
    private static final int[] TOMBSTONE = new int[Holders.HEADER];
    private static final int MIN_CAPACITY = 16;
    /** Resize when live entries plus tombstones pass this share of the slots. */
    private static final double MAX_LOAD = 0.75;
    /** A resize targets this share: capacity grows by 1.25× at a time, so inserts stay amortised O(1). */
    private static final double TARGET_LOAD = 0.6;

    /** The slots and their fingerprints, replaced together by a resize. */
    private record Slots(int[][] refs, byte[] prints) {}

    private volatile Slots slots;

    private int live;
    private int tombstones;
    private long holderBytes;

    HolderTable() {
        this(MIN_CAPACITY);
    }

    HolderTable(int expectedEntries) {
        this.slots = allocate(capacityFor(expectedEntries));
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

    /** The home slot of a mixed key: its high 32 bits scaled to the capacity. */
    private static int home(long mixed, int capacity) {
        return (int) (((mixed >>> 32) * capacity) >>> 32);
    }

    /** The fingerprint of a mixed key: 1..255 from its low 32 bits (independent of the home slot). */
    private static byte print(long mixed) {
        return (byte) (1 + (((mixed & 0xFFFF_FFFFL) * 255) >>> 32));
    }

    @Nullable
    int[] get(long key) {
        Slots table = slots;
        long mixed = mix(key);
        return find(table, key, print(mixed), home(mixed, table.refs.length));
    }

    /** Scans from slot {@code i} for the key; a slot is dereferenced only if its fingerprint matches. */
    private static int @Nullable [] find(Slots table, long key, byte print, int i) {
        int[][] refs = table.refs;
        byte[] prints = table.prints;
        int capacity = refs.length;
        for (; ; ) {
            byte p = prints[i];
            if (p == 0) {
                return null;
            }
            if (p == print) {
                int[] holders = (int[]) SLOTS.getAcquire(refs, i);
                if (holders != null && holders != TOMBSTONE && Holders.key(holders) == key) {
                    return holders;
                }
            }
            if (++i == capacity) {
                i = 0;
            }
        }
    }

    /**
     * Looks up {@code keys[at[i]]} into {@code out[i]} for {@code i < count} ({@code homes} is
     * scratch of the same size). The probes are independent, so their cache misses are made to
     * overlap instead of being paid one after another as a loop of {@link #get} would: one pass
     * loads every key's home fingerprint and home slot, a second finds the slot whose fingerprint
     * matches (usually the home one or a few bytes on, in the line already loaded) and touches its
     * array (the key's line and the last word's, where a shared block's summary is), and a third
     * checks the keys. A key nobody holds touches no array at all. Returns a
     * value of the touched words that the caller should keep, so the touching passes stay.
     */
    int getAt(long[] keys, int[] at, int count, int[][] out, int[] homes) {
        Slots table = slots;
        int touched = load(table, keys, at, 0, count, out, homes);
        touched += touch(table, keys, at, 0, count, out, homes);
        for (int i = 0; i < count; i++) {
            out[i] = resolve(table, keys[at[i]], out[i], homes[i]);
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
    int @Nullable [] getFirst(long[] keys, int[] at, int count, int[][] out, int[] homes, int[] sink) {
        Slots table = slots;
        int touched = load(table, keys, at, 0, count, out, homes);
        touched += touch(table, keys, at, 0, count, out, homes);
        sink[0] += touched;
        return resolve(table, keys[at[0]], out[0], homes[0]);
    }

    /**
     * Loads each key's home fingerprint and home slot (plain loads, then one acquire fence); leaves
     * the home slot in {@code homes}. Returns the fingerprints read, to keep the loads.
     */
    private static int load(Slots table, long[] keys, int[] at, int from, int count, int[][] out, int[] homes) {
        int[][] refs = table.refs;
        byte[] prints = table.prints;
        int capacity = refs.length;
        int loaded = 0;
        for (int i = from; i < count; i++) {
            int home = home(mix(keys[at[i]]), capacity);
            homes[i] = home;
            loaded += prints[home];
            out[i] = refs[home];
        }
        VarHandle.acquireFence();
        return loaded;
    }

    /**
     * For each key, the first slot from its home whose fingerprint matches (or -1 past the run's
     * end) into {@code homes}, its array into {@code out}, and that array's key word touched.
     */
    private static int touch(Slots table, long[] keys, int[] at, int from, int count, int[][] out, int[] homes) {
        int[][] refs = table.refs;
        byte[] prints = table.prints;
        int capacity = refs.length;
        int touched = 0;
        for (int i = from; i < count; i++) {
            byte print = print(mix(keys[at[i]]));
            int home = homes[i];
            int s = home;
            byte p;
            while ((p = prints[s]) != 0 && p != print) {
                if (++s == capacity) {
                    s = 0;
                }
            }
            if (p == 0) {
                homes[i] = -1;
                out[i] = null;
                continue;
            }
            homes[i] = s;
            int[] holders = s == home ? out[i] : refs[s];
            out[i] = holders;
            if (holders != null) {
                // the key's line and the last word's: a shared block's summary sits at the end
                touched += holders[1] + holders[holders.length - 1];
            }
        }
        VarHandle.acquireFence();
        return touched;
    }

    /** The array of {@code key}, given the first slot whose fingerprint matches it and that slot's array. */
    private static int @Nullable [] resolve(Slots table, long key, int @Nullable [] found, int slot) {
        if (slot < 0) {
            return null;
        }
        if (found != null && found != TOMBSTONE && Holders.key(found) == key) {
            return found;
        }
        int next = slot + 1 == table.refs.length ? 0 : slot + 1;
        return find(table, key, print(mix(key)), next);
    }

    /** How many table slots a lookup of {@code key} reads (its home slot and any it probes past), negated if absent; for benchmarks. */
    int slotsRead(long key) {
        Slots table = slots;
        long mixed = mix(key);
        byte print = print(mixed);
        int capacity = table.refs.length;
        int read = 1;
        for (int i = home(mixed, capacity); ; i = i + 1 == capacity ? 0 : i + 1, read++) {
            byte p = table.prints[i];
            if (p == 0) {
                return -read;
            }
            int[] holders = table.refs[i];
            if (p == print && holders != null && holders != TOMBSTONE && Holders.key(holders) == key) {
                return read;
            }
        }
    }

    /** How many arrays of other keys a lookup of {@code key} dereferences (fingerprint collisions); for tests and benchmarks. */
    int wrongArraysRead(long key) {
        Slots table = slots;
        long mixed = mix(key);
        byte print = print(mixed);
        int capacity = table.refs.length;
        int wrong = 0;
        for (int i = home(mixed, capacity); table.prints[i] != 0; i = i + 1 == capacity ? 0 : i + 1) {
            int[] holders = table.refs[i];
            if (table.prints[i] == print && holders != TOMBSTONE) {
                if (Holders.key(holders) == key) {
                    return wrong;
                }
                wrong++;
            }
        }
        return wrong;
    }

    /** Inserts or replaces the array of {@code Holders.key(holders)}. Writer only. */
    void put(int[] holders) {
        long key = Holders.key(holders);
        long mixed = mix(key);
        byte print = print(mixed);
        Slots table = slots;
        int[][] refs = table.refs;
        byte[] prints = table.prints;
        int capacity = refs.length;
        int free = -1;
        for (int i = home(mixed, capacity); ; i = i + 1 == capacity ? 0 : i + 1) {
            int[] current = refs[i];
            if (prints[i] == 0) {
                if (free < 0) {
                    free = i;
                } else {
                    tombstones--;
                }
                // the fingerprint before the array: a reader that sees the array sees its fingerprint
                prints[free] = print;
                SLOTS.setRelease(refs, free, holders);
                live++;
                holderBytes += bytes(holders);
                growIfNeeded();
                return;
            }
            if (current == TOMBSTONE) {
                if (free < 0) {
                    free = i;
                }
            } else if (prints[i] == print && Holders.key(current) == key) {
                SLOTS.setRelease(refs, i, holders);
                holderBytes += bytes(holders) - bytes(current);
                return;
            }
        }
    }

    /** Removes the key if present. Writer only. */
    boolean remove(long key) {
        long mixed = mix(key);
        byte print = print(mixed);
        Slots table = slots;
        int[][] refs = table.refs;
        byte[] prints = table.prints;
        int capacity = refs.length;
        for (int i = home(mixed, capacity); prints[i] != 0; i = i + 1 == capacity ? 0 : i + 1) {
            int[] current = refs[i];
            if (current != TOMBSTONE && prints[i] == print && Holders.key(current) == key) {
                SLOTS.setRelease(refs, i, TOMBSTONE);
                live--;
                holderBytes -= bytes(current);
                tombstones++;
                growIfNeeded();
                return true;
            }
        }
        return false;
    }

    int size() {
        return live;
    }

    int capacity() {
        return slots.refs.length;
    }

    int tombstones() {
        return tombstones;
    }

    /** Heap retained by the holder arrays (compressed-oops object layout). */
    long holderBytes() {
        return holderBytes;
    }

    /** Heap retained by the table itself: the slot and fingerprint arrays. */
    long slotBytes() {
        int capacity = capacity();
        return 16 + ((16L + 4L * capacity + 7) & ~7L) + ((16L + capacity + 7) & ~7L);
    }

    private static long bytes(int[] holders) {
        return (16L + 4L * holders.length + 7) & ~7L;
    }

    private void growIfNeeded() {
        if (live + tombstones > slots.refs.length * MAX_LOAD) {
            rehash(capacityFor(live));
        }
    }

    private void rehash(int capacity) {
        Slots old = slots;
        Slots table = allocate(capacity);
        for (int[] holders : old.refs) {
            if (holders != null && holders != TOMBSTONE) {
                long mixed = mix(Holders.key(holders));
                int i = home(mixed, capacity);
                while (table.prints[i] != 0) {
                    i = i + 1 == capacity ? 0 : i + 1;
                }
                table.prints[i] = print(mixed);
                table.refs[i] = holders;
            }
        }
        tombstones = 0;
        slots = table;
    }

    private static Slots allocate(int capacity) {
        return new Slots(new int[capacity][], new byte[capacity]);
    }

    /** Slots for {@code entries} at the target load, rounded up to a multiple of 16. */
    private static int capacityFor(int entries) {
        long wanted = (long) Math.ceil(Math.max(entries, 1) / TARGET_LOAD);
        long capacity = (Math.max(wanted, MIN_CAPACITY) + 15) & ~15L;
        if (capacity > 1 << 30) {
            throw new IllegalStateException("prefix index table cannot hold " + entries + " hashes");
        }
        return (int) capacity;
    }
}
