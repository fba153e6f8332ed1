package io.kvreuse.index;

import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import org.jspecify.annotations.Nullable;

/**
 * One retained bank in the index. The {@link #view} is read by lookups; everything else is the
 * writer's bookkeeping (guarded by the index's write lock): which hash sits in which slot, so a
 * reset or drop can find every block of the bank without a per-bank hash set, and the bank's
 * block tree, which tells whether the bank is prefix-closed.
 *
 * <p><b>Prefix closure.</b> A held block is <em>anchored</em> when it is a root (position 0) or its
 * parent is held in the same bank at the position before it with no other multimodal lineage
 * ({@code NONE} or the child's). A bank whose every block is anchored is prefix-closed: along any
 * chain whose hashes name their prefixes, if it serves block i it serves every block before i, so
 * lookups find its coverage by binary search. Per slot the writer keeps where the anchoring
 * parent is (as a 2-byte slot distance; far parents in a side map) and how many children are
 * anchored to it (1 byte, saturating: a block with more is searched for by a full scan); blocks whose parent is missing (orphans) are
 * listed by the parent hash they wait for, so a re-stored parent anchors them again.
 */
final class Bank {

    /** The parent of a root block. */
    static final int ROOT = -1;
    /** The parent of a held block whose parent is not held (or not at the position before it). */
    static final int ORPHAN = -2;
    /** The parent of a slot that holds nothing. */
    private static final int EMPTY = -3;
    /** A {@link #children} count that overflowed: the slot's children are found by a full scan. */
    private static final int MANY = 0xFF;
    // parentDelta codes; any other value is (parent slot - slot), never 0
    private static final short D_EMPTY = 0;
    private static final short D_ROOT = Short.MIN_VALUE;
    private static final short D_ORPHAN = Short.MIN_VALUE + 1;
    /** The parent is too far away for a short: its slot is in {@link #farParents}. */
    private static final short D_FAR = Short.MIN_VALUE + 2;

    final UUID id;
    /** The id's two halves, for ordering candidates as {@link UUID#compareTo} does without reaching the UUID. */
    final long idHi;

    final long idLo;
    final int index;
    final int domain;
    final int capacity;
    volatile BankView view;

    private long[] slotHashes = new long[0];
    private long[] occupied = new long[0];
    /** Per slot, where its anchoring parent is (2 bytes: engines write a conversation into nearby slots). */
    private short[] parentDelta = new short[0];
    /** Per slot, how many held blocks are anchored to it (saturating at {@link #MANY}). */
    private byte[] children = new byte[0];

    private final Map<Integer, Integer> farParents = new HashMap<>();
    private final Map<Integer, Long> orphanParent = new HashMap<>();
    private final Map<Long, int[]> waiting = new HashMap<>();
    private int orphans;
    private int entries;

    Bank(UUID id, int index, int domain, int capacity, long epoch) {
        this.id = id;
        this.idHi = id.getMostSignificantBits();
        this.idLo = id.getLeastSignificantBits();
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
            parentDelta = Arrays.copyOf(parentDelta, size);
            children = Arrays.copyOf(children, size);
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
        return 8L * slotHashes.length + 8L * occupied.length + 3L * parentDelta.length + 24L * farParents.size();
    }

    /** Whether every held block is anchored (see the class documentation). */
    boolean prefixClosed() {
        return orphans == 0;
    }

    /** The held block in {@code slot} is anchored to the held block in {@code parent} ({@link #ROOT} for a root). */
    void anchor(int slot, int parent) {
        setParent(slot, parent);
        if (parent >= 0) {
            addChild(parent, 1);
        }
    }

    /** The held block in {@code slot} waits for its parent {@code parentHash}. */
    void orphan(int slot, long parentHash) {
        setParent(slot, ORPHAN);
        orphans++;
        orphanParent.put(slot, parentHash);
        int[] list = waiting.get(parentHash);
        if (list == null) {
            waiting.put(parentHash, new int[] {1, slot});
            return;
        }
        if (list[0] + 1 == list.length) {
            list = Arrays.copyOf(list, list.length * 2);
            waiting.put(parentHash, list);
        }
        list[++list[0]] = slot;
    }

    /**
     * Forgets the tree links of the held block in {@code slot}, which is about to go away: its own
     * link to its parent, and its anchored children, which become orphans waiting for {@code hash}.
     */
    void detach(int slot, long hash) {
        if (!occupied(slot) || slotHashes[slot] != hash) {
            return;
        }
        int parent = parentOf(slot);
        if (parent == ORPHAN) {
            orphans--;
            Long parentHash = orphanParent.remove(slot);
            if (parentHash != null) {
                unwait(parentHash, slot);
            }
        } else if (parent >= 0) {
            addChild(parent, -1);
        }
        setParent(slot, EMPTY);
        int count = children[slot] & 0xFF;
        children[slot] = 0;
        if (count == 0) {
            return;
        }
        // engines write a conversation into mostly consecutive slots: search onwards from the parent
        int found = 0;
        int size = parentDelta.length;
        for (int step = 1; step < size && (count == MANY || found < count); step++) {
            int c = slot + step < size ? slot + step : slot + step - size;
            short d = parentDelta[c];
            if (d > D_FAR ? d == slot - c : d == D_FAR && farParents.get(c) == slot) {
                orphan(c, hash);
                found++;
            }
        }
    }

    /** Orphans waiting for {@code parentHash}, removed from the waiting list; null if none. */
    int @Nullable [] takeWaiting(long parentHash) {
        int[] list = waiting.remove(parentHash);
        if (list == null) {
            return null;
        }
        int[] slots = Arrays.copyOfRange(list, 1, list[0] + 1);
        for (int slot : slots) {
            orphans--;
            orphanParent.remove(slot);
            setParent(slot, EMPTY);
        }
        return slots;
    }

    /** Drops all tree bookkeeping: the bank was emptied. */
    void clearTree() {
        Arrays.fill(parentDelta, D_EMPTY);
        Arrays.fill(children, (byte) 0);
        farParents.clear();
        orphanParent.clear();
        waiting.clear();
        orphans = 0;
    }

    private int parentOf(int slot) {
        return switch (parentDelta[slot]) {
            case D_EMPTY -> EMPTY;
            case D_ROOT -> ROOT;
            case D_ORPHAN -> ORPHAN;
            case D_FAR -> farParents.get(slot);
            default -> slot + parentDelta[slot];
        };
    }

    private void setParent(int slot, int parent) {
        if (parentDelta[slot] == D_FAR) {
            farParents.remove(slot);
        }
        short d;
        if (parent == EMPTY) {
            d = D_EMPTY;
        } else if (parent == ROOT) {
            d = D_ROOT;
        } else if (parent == ORPHAN) {
            d = D_ORPHAN;
        } else if (parent - slot > D_FAR && parent - slot <= Short.MAX_VALUE) {
            d = (short) (parent - slot);
        } else {
            d = D_FAR;
            farParents.put(slot, parent);
        }
        parentDelta[slot] = d;
    }

    private void addChild(int parent, int delta) {
        int count = children[parent] & 0xFF;
        if (count != MANY) {
            children[parent] = (byte) (count + delta);
        }
    }

    private void unwait(long parentHash, int slot) {
        int[] list = waiting.get(parentHash);
        if (list == null) {
            return;
        }
        for (int i = 1; i <= list[0]; i++) {
            if (list[i] == slot) {
                list[i] = list[list[0]--];
                break;
            }
        }
        if (list[0] == 0) {
            waiting.remove(parentHash);
        }
    }

    private int countOccupied() {
        int n = 0;
        for (long word : occupied) {
            n += Long.bitCount(word);
        }
        return n;
    }
}
