package io.kvreuse.index;

import java.util.Arrays;
import java.util.UUID;

/**
 * One retained bank in the index. The {@link #view} is read by lookups; everything else is the
 * writer's bookkeeping (guarded by the index's write lock): which hash sits in which slot, so a
 * reset or drop can find every block of the bank without a per-bank hash set.
 */
final class Bank {

    final UUID id;
    final int index;
    final int domain;
    final int capacity;
    volatile BankView view;

    private long[] slotHashes = new long[0];
    private long[] occupied = new long[0];
    private int entries;

    Bank(UUID id, int index, int domain, int capacity, long epoch) {
        this.id = id;
        this.index = index;
        this.domain = domain;
        this.capacity = capacity;
        this.view = BankView.initial(epoch);
    }

    boolean occupied(int slot) {
        return slot < slotHashes.length && (occupied[slot >>> 6] & (1L << slot)) != 0;
    }

    long hashAt(int slot) {
        return slotHashes[slot];
    }

    void occupy(int slot, long hash) {
        if (slot >= slotHashes.length) {
            int size = Math.min(capacity, Math.max(slot + 1, slotHashes.length * 2));
            slotHashes = Arrays.copyOf(slotHashes, size);
            occupied = Arrays.copyOf(occupied, (size + 63) >>> 6);
        }
        slotHashes[slot] = hash;
        occupied[slot >>> 6] |= 1L << slot;
    }

    void vacate(int slot, long hash) {
        if (occupied(slot) && slotHashes[slot] == hash) {
            occupied[slot >>> 6] &= ~(1L << slot);
        }
    }

    /** The hashes of every occupied slot. */
    long[] heldHashes() {
        long[] hashes = new long[countOccupied()];
        int n = 0;
        for (int slot = 0; slot < slotHashes.length; slot++) {
            if (occupied(slot)) {
                hashes[n++] = slotHashes[slot];
            }
        }
        return hashes;
    }

    int entries() {
        return entries;
    }

    void addEntries(int delta) {
        entries += delta;
    }

    long slotBytes() {
        return 8L * slotHashes.length + 8L * occupied.length;
    }

    private int countOccupied() {
        int n = 0;
        for (long word : occupied) {
            n += Long.bitCount(word);
        }
        return n;
    }
}
