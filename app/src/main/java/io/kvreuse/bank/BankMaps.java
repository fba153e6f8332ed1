package io.kvreuse.bank;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.jspecify.annotations.Nullable;

/**
 * The rank maps of one bank ({@link RankMap}), as this replica last read or wrote them. A write plans
 * from them ({@link #plan}) and, once it committed, applies itself to them ({@link #applied}); the
 * database refuses a plan made from a version that is no longer the rank's, so maps that fell behind
 * (another replica wrote, a snapshot or reset) cost a reload, never a wrong write.
 */
final class BankMaps {

    final UUID bankId;
    /** When a write last planned from or applied to these maps ({@link System#nanoTime()}). */
    volatile long lastUsed = System.nanoTime();

    private final int[] ranks;
    private final @Nullable RankMap[] maps;

    BankMaps(UUID bankId, int[] ranks, RankMap[] maps) {
        this.bankId = bankId;
        this.ranks = ranks;
        this.maps = maps;
    }

    /**
     * What a batch on {@code rank} needs from the maps: the rank's map version, the slots the rank
     * holds the stored and removed hashes at, whether another rank's map holds a stored hash at
     * another slot, and a parent outside the batch whose position contradicts its children (the
     * expected positions by parent hash). The database checks the version, so this rank's part is
     * exact; the other ranks' maps are as this replica last wrote or read them (see {@link
     * #applied}). Null when a map is missing (dropped after a failure) or the bank has no such rank.
     */
    synchronized @Nullable Plan plan(int rank, BatchEffect effect, Map<Long, Integer> expectedParents) {
        lastUsed = System.nanoTime();
        int own = indexOf(rank);
        if (own < 0) {
            return null;
        }
        for (RankMap map : maps) {
            if (map == null) {
                return null;
            }
        }
        RankMap mine = maps[own];
        List<long[]> owned = new ArrayList<>();
        boolean misplaced = false;
        for (InventoryBlock b : effect.stored.values()) {
            int slot = mine.slotOf(b.seqHash());
            if (slot >= 0) {
                owned.add(new long[] {b.seqHash(), slot});
            }
            for (int r = 0; r < ranks.length && !misplaced; r++) {
                int elsewhere = r == own ? -1 : maps[r].slotOf(b.seqHash());
                misplaced = elsewhere >= 0 && elsewhere != b.slot();
            }
        }
        for (long hash : effect.removed) {
            int slot = mine.slotOf(hash);
            if (slot >= 0) {
                owned.add(new long[] {hash, slot});
            }
        }
        Long contradicted = null;
        for (Map.Entry<Long, Integer> e : expectedParents.entrySet()) {
            int slot = mine.slotOf(e.getKey());
            if (slot >= 0 && mine.positionAt(slot) != e.getValue()) {
                contradicted = e.getKey();
                break;
            }
        }
        long[] ownHashes = new long[owned.size()];
        int[] ownSlots = new int[owned.size()];
        for (int i = 0; i < ownHashes.length; i++) {
            ownHashes[i] = owned.get(i)[0];
            ownSlots[i] = (int) owned.get(i)[1];
        }
        return new Plan(rank, mine.version, ownHashes, ownSlots, misplaced, contradicted);
    }

    /** The position the rank holds {@code hash} at, or null. */
    synchronized @Nullable Integer positionOf(int rank, long hash) {
        int own = indexOf(rank);
        RankMap map = own < 0 ? null : maps[own];
        if (map == null) {
            return null;
        }
        int slot = map.slotOf(hash);
        return slot < 0 ? null : map.positionAt(slot);
    }

    /**
     * Applies a write of {@code plan}'s batch to the rank's map, which takes the version the write set
     * ({@code newVersion}); a map that moved since the plan was made is dropped instead (read again
     * when next needed). A write inside a transaction that later rolls back leaves the map at a
     * version the rank never has, so the next plan from it is refused and the maps are read again. True when, now, another rank's map holds one of the stored hashes at another slot: a
     * placement disagreement the plan could not see, because that rank's batch committed while this
     * one was in flight (of two such batches, the one applied second finds the other's block, as
     * both apply here one at a time). The caller then has the bank checked under its lock.
     */
    synchronized boolean applied(Plan plan, BatchEffect effect, long newVersion) {
        int own = indexOf(plan.rank());
        RankMap map = own < 0 ? null : maps[own];
        if (map == null) {
            return false;
        }
        if (map.version != plan.version()) {
            maps[own] = null;
            return false;
        }
        for (int slot : plan.ownSlots()) {
            map.clear(slot);
        }
        for (InventoryBlock b : effect.stored.values()) {
            map.clear(b.slot());
        }
        for (InventoryBlock b : effect.stored.values()) {
            map.store(b.slot(), b.seqHash(), b.position());
        }
        map.version = newVersion;
        if (plan.misplaced()) {
            return false; // already a disagreement the write reported
        }
        for (InventoryBlock b : effect.stored.values()) {
            for (int r = 0; r < ranks.length; r++) {
                if (r != own && maps[r] != null) {
                    int elsewhere = maps[r].slotOf(b.seqHash());
                    if (elsewhere >= 0 && elsewhere != b.slot()) {
                        return true;
                    }
                }
            }
        }
        return false;
    }

    /** Whether the plan's rank map moved (or went) since {@code plan} was made from these maps. */
    synchronized boolean movedSince(Plan plan) {
        int own = indexOf(plan.rank());
        return own < 0 || maps[own] == null || maps[own].version != plan.version();
    }

    /** Whether every rank's map is there and at the version the database holds ({@code versions} by rank). */
    synchronized boolean current(Map<Integer, Long> versions) {
        if (versions.size() != ranks.length) {
            return false;
        }
        for (int r = 0; r < ranks.length; r++) {
            Long version = versions.get(ranks[r]);
            if (maps[r] == null || version == null || version != maps[r].version) {
                return false;
            }
        }
        return true;
    }

    private int indexOf(int rank) {
        for (int r = 0; r < ranks.length; r++) {
            if (ranks[r] == rank) {
                return r;
            }
        }
        return -1;
    }

    /**
     * A batch's view of the maps: the version of its rank's map it was made from, the slots the rank
     * holds the batch's stored or removed hashes at, whether another rank holds a stored hash at
     * another slot, and a parent outside the batch whose position contradicts its children (null if
     * none).
     */
    record Plan(
            int rank,
            long version,
            long[] ownHashes,
            int[] ownSlots,
            boolean misplaced,
            @Nullable Long contradictedParent) {}
}
