package io.kvreuse.index;

import static io.kvreuse.index.Holders.NO_RECORD;
import static io.kvreuse.index.Holders.PENDING;
import static io.kvreuse.index.Holders.REMOVED;

import java.util.Arrays;
import org.jspecify.annotations.Nullable;

/**
 * Applies one bank's batch to the shared table as pending records (invisible to lookups until the
 * bank's view commits the batch), then settles them. At most one committed and one pending record
 * exist per (hash, bank). Writer only: the index's write lock is held for every call.
 */
final class BatchWriter {

    private final HolderTable table;
    private final LineageIds lineages;
    private long[] touched = new long[256];
    private int touchedCount;
    private boolean bulk;

    BatchWriter(HolderTable table, LineageIds lineages) {
        this.table = table;
        this.lineages = lineages;
    }

    void store(Bank bank, StoredBlock block) {
        long hash = block.seqHash();
        int slot = block.slot();
        if (bank.occupied(slot) && bank.hashAt(slot) != hash) {
            remove(bank, bank.hashAt(slot)); // the engine reused the slot: the old block is gone
        }
        int[] holders = table.get(hash);
        int pending = holders == null ? NO_RECORD : Holders.pendingRecord(holders, bank.index);
        int committed = holders == null ? NO_RECORD : Holders.committed(holders, bank.index);
        int current = pending != NO_RECORD ? pending : committed;
        if (current != NO_RECORD && Holders.slot(holders, current) != REMOVED) {
            if (sameBlock(holders, current, block)) {
                return;
            }
            bank.detach(Holders.slot(holders, current), hash);
            bank.vacate(Holders.slot(holders, current), hash);
        }
        int lineage = lineages.acquire(block.mmLineage());
        int word = bank.index | PENDING;
        int[] updated;
        if (holders == null) {
            updated = Holders.single(hash, word, slot, block.position(), lineage);
        } else if (pending != NO_RECORD) {
            lineages.release(Holders.lineage(holders, pending));
            updated = Holders.replace(holders, pending, word, slot, block.position(), lineage);
        } else {
            updated = Holders.insert(holders, word, slot, block.position(), lineage);
        }
        table.put(updated);
        bank.occupy(slot, hash);
        touch(hash);
        attach(bank, slot, hash, block.parentHash(), block.position(), lineage);
    }

    /** Removes every block of the bank (a reset or drop); its tree bookkeeping goes at once. */
    void removeAll(Bank bank) {
        bulk = true;
        try {
            for (long hash : bank.heldHashes()) {
                remove(bank, hash);
            }
        } finally {
            bulk = false;
            bank.clearTree();
        }
    }

    /**
     * Links the block just stored in {@code slot} into the bank's tree: anchored to its parent if
     * that is held at the position before it with a compatible lineage, else an orphan waiting for
     * it; and orphans that waited for this block are anchored to it where they fit.
     */
    private void attach(Bank bank, int slot, long hash, @Nullable Long parentHash, int position, int lineage) {
        if (parentHash == null) {
            bank.anchor(slot, Bank.ROOT);
        } else {
            int parent = fittingParent(bank, parentHash, position, lineage);
            if (parent >= 0) {
                bank.anchor(slot, parent);
            } else {
                bank.orphan(slot, parentHash);
            }
        }
        int[] waiting = bank.takeWaiting(hash);
        if (waiting == null) {
            return;
        }
        for (int child : waiting) {
            int[] holders = table.get(bank.hashAt(child));
            int record = holders == null ? NO_RECORD : current(holders, bank.index);
            if (record != NO_RECORD
                    && Holders.position(holders, record) == position + 1
                    && fits(lineage, Holders.lineage(holders, record))) {
                bank.anchor(child, slot);
            } else {
                bank.orphan(child, hash);
            }
        }
    }

    /** The slot of {@code parentHash} in the bank if it can anchor a child at {@code position}; else -1. */
    private int fittingParent(Bank bank, long parentHash, int position, int lineage) {
        int[] holders = table.get(parentHash);
        int record = holders == null ? NO_RECORD : current(holders, bank.index);
        if (record == NO_RECORD
                || Holders.position(holders, record) + 1 != position
                || !fits(Holders.lineage(holders, record), lineage)) {
            return -1;
        }
        return Holders.slot(holders, record);
    }

    /** A parent of lineage {@code parent} never stops a request that its child of lineage {@code child} serves. */
    private static boolean fits(int parent, int child) {
        return parent == LineageIds.NONE || parent == child;
    }

    /** The bank's record as the writer has it now (pending, else committed), if live; else NO_RECORD. */
    private static int current(int[] holders, int bank) {
        int pending = Holders.pendingRecord(holders, bank);
        int record = pending != NO_RECORD ? pending : Holders.committed(holders, bank);
        return record == NO_RECORD || Holders.slot(holders, record) == REMOVED ? NO_RECORD : record;
    }

    void remove(Bank bank, long hash) {
        int[] holders = table.get(hash);
        if (holders == null) {
            return;
        }
        int pending = Holders.pendingRecord(holders, bank.index);
        int committed = Holders.committed(holders, bank.index);
        int current = pending != NO_RECORD ? pending : committed;
        if (current == NO_RECORD || Holders.slot(holders, current) == REMOVED) {
            return;
        }
        if (!bulk) {
            bank.detach(Holders.slot(holders, current), hash);
        }
        bank.vacate(Holders.slot(holders, current), hash);
        int word = bank.index | PENDING;
        if (pending != NO_RECORD) {
            lineages.release(Holders.lineage(holders, pending));
            if (committed == NO_RECORD) {
                publish(hash, Holders.without(holders, pending, NO_RECORD)); // stored and removed in one batch
            } else {
                table.put(Holders.replace(holders, pending, word, REMOVED, 0, LineageIds.NONE));
            }
        } else {
            table.put(Holders.insert(holders, word, REMOVED, 0, LineageIds.NONE));
            touch(hash);
        }
    }

    /**
     * Called after the bank's view committed the batch: makes every pending record of the batch
     * committed, dropping what it superseded. Returns the change in the bank's entry count.
     */
    int settle(Bank bank) {
        int delta = 0;
        for (int i = 0; i < touchedCount; i++) {
            delta += settle(bank, touched[i]);
        }
        touchedCount = 0;
        if (touched.length > 4096) {
            touched = new long[256];
        }
        return delta;
    }

    private int settle(Bank bank, long hash) {
        int[] holders = table.get(hash);
        int pending = holders == null ? NO_RECORD : Holders.pendingRecord(holders, bank.index);
        if (pending == NO_RECORD) {
            return 0; // already settled (the hash was touched twice)
        }
        int committed = Holders.committed(holders, bank.index);
        boolean before = committed != NO_RECORD;
        boolean after = Holders.slot(holders, pending) != REMOVED;
        if (before) {
            lineages.release(Holders.lineage(holders, committed));
        }
        if (!after) {
            publish(hash, Holders.without(holders, pending, committed));
        } else if (before) {
            // committed sorts before pending within a bank, so the pending record moves down by one
            int[] updated = Holders.without(holders, committed, NO_RECORD);
            Holders.settle(updated, pending - 1); // not yet published: sets its summary bit too
            table.put(updated);
        } else {
            Holders.settle(holders, pending);
        }
        return (after ? 1 : 0) - (before ? 1 : 0);
    }

    private boolean sameBlock(int[] holders, int record, StoredBlock block) {
        return Holders.slot(holders, record) == block.slot()
                && Holders.position(holders, record) == block.position()
                && Holders.lineage(holders, record) == lineages.lookup(block.mmLineage());
    }

    private void publish(long hash, int @Nullable [] holders) {
        if (holders == null) {
            table.remove(hash);
        } else {
            table.put(holders);
        }
    }

    private void touch(long hash) {
        if (touchedCount == touched.length) {
            touched = Arrays.copyOf(touched, touched.length * 2);
        }
        touched[touchedCount++] = hash;
    }
}
