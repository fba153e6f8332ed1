package io.kvreuse.index;

import static io.kvreuse.index.Holders.NO_RECORD;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;
import org.jspecify.annotations.Nullable;

/**
 * The read path: walks the request's chain from the root, intersecting the banks still holding
 * every block so far with the holders of the next hash. Work is O(fan-out of h[0] + Σ live
 * candidates per level), never proportional to the fleet's blocks. Hashes are probed a chunk at a
 * time so the CPU overlaps the cache misses of independent probes. No locks: each candidate is
 * interpreted against the {@link BankView} taken before its records were read and checked against
 * the view after; a bank whose batch was purged meanwhile is walked again on its own.
 */
final class CoverageSearch {

    private static final int MAX_CHUNK = 32;
    private static final int MAX_ATTEMPTS = 8;

    private final HolderTable table;
    private final LongAdder retries = new LongAdder();

    CoverageSearch(HolderTable table) {
        this.table = table;
    }

    long retries() {
        return retries.sum();
    }

    List<Candidate> lookup(Bank[] banks, int domain, long[] h, int n, int lineage, int maxCandidates) {
        int[] first = table.get(h[0]);
        if (first == null || maxCandidates <= 0) {
            return List.of();
        }
        Walk walk = Walk.discover(first, banks, domain);
        if (walk.size == 0) {
            return List.of();
        }
        walkChain(walk, h, n, lineage);
        for (int a = 0; a < walk.size; a++) {
            if (!walk.views[a].stillExplains(walk.banks[a].view)) {
                walk.covered[a] = walkOne(walk.banks[a], walk.views, a, h, n, lineage);
            }
        }
        return walk.best(maxCandidates);
    }

    /** The slots of {@code h[from..to)} in the bank, as far as it holds them contiguously now. */
    int[] slots(Bank bank, long epoch, long[] h, int from, int to, int lineage) {
        for (int attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
            BankView view = bank.view;
            if (!view.published() || view.epoch() != epoch) {
                return new int[0];
            }
            int[] slots = new int[to - from];
            int k = 0;
            for (int i = from; i < to; i++) {
                int[] holders = table.get(h[i]);
                int record = holders == null ? NO_RECORD : serving(holders, 0, bank.index, view, i, lineage);
                if (record == NO_RECORD) {
                    break;
                }
                slots[k++] = Holders.slot(holders, record);
            }
            if (view.stillExplains(bank.view)) {
                return Arrays.copyOf(slots, k);
            }
            retries.increment();
        }
        return new int[0];
    }

    private void walkChain(Walk walk, long[] h, int n, int lineage) {
        int[][] chunk = new int[Math.min(MAX_CHUNK, n)][];
        int chunkSize = 4;
        int alive = walk.size;
        for (int level = 0; level < n && alive > 0; ) {
            int end = Math.min(n, level + chunkSize);
            table.getAll(h, level, end, chunk);
            for (int i = level; i < end && alive > 0; i++) {
                alive = walk.advance(chunk[i - level], i, alive, lineage);
            }
            level = end;
            chunkSize = Math.min(MAX_CHUNK, chunkSize * 2);
        }
        for (int j = 0; j < alive; j++) {
            walk.covered[walk.alive[j]] = n;
        }
    }

    /** Coverage of one bank alone, from a fresh view; 0 if it keeps changing under us. */
    private int walkOne(Bank bank, BankView[] views, int at, long[] h, int n, int lineage) {
        for (int attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
            retries.increment();
            BankView view = bank.view;
            int k = 0;
            if (view.published()) {
                while (k < n) {
                    int[] holders = table.get(h[k]);
                    if (holders == null || serving(holders, 0, bank.index, view, k, lineage) == NO_RECORD) {
                        break;
                    }
                    k++;
                }
            }
            if (view.stillExplains(bank.view)) {
                views[at] = view;
                return k;
            }
        }
        return 0;
    }

    /**
     * The record of {@code bank} (searched from record {@code from}) that the view makes current, if
     * it is live, at {@code position}, and may serve {@code lineage}; else {@link Holders#NO_RECORD}.
     */
    static int serving(int[] holders, int from, int bank, BankView view, int position, int lineage) {
        int committed = NO_RECORD;
        int pending = NO_RECORD;
        int count = Holders.count(holders);
        for (int r = from; r < count; r++) {
            int word = Holders.bankWord(holders, r);
            int b = Holders.bank(word);
            if (b > bank) {
                break;
            }
            if (b == bank) {
                if (Holders.pending(word)) {
                    pending = r;
                } else {
                    committed = r;
                }
            }
        }
        int record = view.settling() && pending != NO_RECORD ? pending : committed;
        if (record == NO_RECORD
                || Holders.slot(holders, record) == Holders.REMOVED
                || Holders.position(holders, record) != position) {
            return NO_RECORD;
        }
        int blockLineage = Holders.lineage(holders, record);
        return blockLineage == LineageIds.NONE || blockLineage == lineage ? record : NO_RECORD;
    }

    /** Per-lookup state: the banks found holding h[0], their views, coverage, and who is still alive. */
    private static final class Walk {
        final Bank[] banks;
        final BankView[] views;
        final int[] covered;
        final int[] alive;
        int size;

        private Walk(int capacity) {
            banks = new Bank[capacity];
            views = new BankView[capacity];
            covered = new int[capacity];
            alive = new int[capacity];
        }

        static Walk discover(int[] first, @Nullable Bank[] all, int domain) {
            int count = Holders.count(first);
            Walk walk = new Walk(count);
            int previous = -1;
            for (int r = 0; r < count; r++) {
                int index = Holders.bank(Holders.bankWord(first, r));
                if (index == previous || index >= all.length) {
                    continue;
                }
                previous = index;
                Bank bank = all[index];
                if (bank == null || bank.domain != domain) {
                    continue;
                }
                BankView view = bank.view;
                if (view.published()) {
                    walk.banks[walk.size] = bank;
                    walk.views[walk.size] = view;
                    walk.alive[walk.size] = walk.size;
                    walk.size++;
                }
            }
            return walk;
        }

        /** Keeps the alive banks serving {@code h[level]}; the others cover exactly {@code level}. */
        int advance(int @Nullable [] holders, int level, int alive, int lineage) {
            if (holders == null) {
                for (int j = 0; j < alive; j++) {
                    covered[this.alive[j]] = level;
                }
                return 0;
            }
            int count = Holders.count(holders);
            boolean search = alive * 8 < count;
            int r = 0;
            int kept = 0;
            for (int j = 0; j < alive; j++) {
                int a = this.alive[j];
                int bank = banks[a].index;
                if (search) {
                    r = Holders.firstAtOrAfter(holders, bank);
                } else {
                    while (r < count && Holders.bank(holders[Holders.offset(r)]) < bank) {
                        r++;
                    }
                }
                if (serving(holders, r, bank, views[a], level, lineage) != NO_RECORD) {
                    this.alive[kept++] = a;
                } else {
                    covered[a] = level;
                }
            }
            return kept;
        }

        List<Candidate> best(int maxCandidates) {
            int[] top = new int[Math.min(maxCandidates, size)];
            int n = 0;
            for (int a = 0; a < size; a++) {
                if (covered[a] == 0 || (n == top.length && !better(a, top[n - 1]))) {
                    continue;
                }
                int at = n == top.length ? n - 1 : n++;
                while (at > 0 && better(a, top[at - 1])) {
                    top[at] = top[at - 1];
                    at--;
                }
                top[at] = a;
            }
            List<Candidate> result = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                int a = top[i];
                result.add(new Candidate(banks[a].id, views[a].epoch(), covered[a]));
            }
            return result;
        }

        private boolean better(int a, int b) {
            return covered[a] > covered[b] || (covered[a] == covered[b] && banks[a].id.compareTo(banks[b].id) < 0);
        }
    }
}
