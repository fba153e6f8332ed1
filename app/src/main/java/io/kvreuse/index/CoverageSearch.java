package io.kvreuse.index;

import static io.kvreuse.index.Holders.NO_RECORD;

import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;
import org.jspecify.annotations.Nullable;

/**
 * The read path. The banks holding {@code h[0]} are the candidates. A prefix-closed bank (see
 * {@link Bank}) that serves block i serves every block before it, so its coverage is found by
 * binary search over the chain; candidates are searched together: a probe of level {@code mid}
 * splits the candidates still undecided into those serving it (coverage above {@code mid}) and the
 * others (coverage at most {@code mid}), and each part is searched on in its half. The work is about
 * (distinct coverages among the candidates) × log2(n) probes. Candidates within one 64-bank window
 * are searched as bit words ({@link WindowSearch}); others as ranges of an order merged with each
 * probe's holder array. A bank that is not prefix-closed right now is walked level by level instead.
 * No locks: each candidate is interpreted against the {@link BankView} taken before its records
 * were read and checked against the view after; a bank whose batch was purged meanwhile is searched
 * again on its own. Per-lookup scratch arrays are kept per thread, so a lookup allocates only its
 * answer.
 */
final class CoverageSearch {

    private static final int MAX_ATTEMPTS = 8;

    private final HolderTable table;
    private final LongAdder retries = new LongAdder();
    private final ThreadLocal<LookupScratch> scratch = ThreadLocal.withInitial(LookupScratch::new);

    CoverageSearch(HolderTable table) {
        this.table = table;
    }

    long retries() {
        return retries.sum();
    }

    /**
     * This thread's lookups so far, the table lookups of their prefix-closed searches (keys
     * resolved, counting {@code h[0]}'s round twice as the code does) and their dependent fetch
     * rounds; for benchmarks. The per-bank walks of banks that are not prefix-closed are not counted.
     */
    long[] threadCounters() {
        LookupScratch s = scratch.get();
        return new long[] {s.lookups, s.keys, s.rounds};
    }

    List<Candidate> lookup(@Nullable Bank[] banks, int domain, long[] h, int n, int lineage, int maxCandidates) {
        if (maxCandidates <= 0) {
            return List.of();
        }
        LookupScratch s = scratch.get();
        // the first round's probe slots are loaded with h[0]'s: their cache misses overlap. Besides
        // the levels spread over the chain it probes the last one, which decides at once every
        // bank holding the whole chain (a full hit) instead of searching on for it
        int m = Math.min(ProbeLevels.FANOUT - 1, n - 1);
        s.at[0] = 0;
        for (int j = 0; j < m; j++) {
            s.at[j + 1] = ProbeLevels.probe(0, n, m, j);
        }
        if (m > 0 && s.at[m] < n - 1) {
            s.at[++m] = n - 1;
        }
        int[] first = table.getFirst(h, s.at, m + 1, s.probes, s.homes, s.sink);
        s.lookups++;
        s.keys += m + 1;
        s.rounds++;
        if (first == null) {
            return List.of();
        }
        int size = s.discover(first, banks, domain);
        if (size == 0) {
            s.all = null;
            return List.of();
        }
        // the chain's cache lines are read now, all at once, so that the search's probes find h[mid]
        // in cache instead of adding its miss to each round's chain of dependent misses (not before
        // h[0] is known to be held: a miss would pay for them)
        long touched = h[n - 1];
        for (int i = 0; i < n; i += 8) {
            touched += h[i];
        }
        s.sink[0] += (int) touched;
        // records are read after the views that interpret them: h[0] again, with the first round
        s.sink[0] += table.getAt(h, s.at, m + 1, s.probes, s.homes);
        s.keys += m + 1;
        if (s.fits) {
            for (int a = 0; a < size; a++) {
                s.covered[a] = 0;
            }
            long serving = WindowSearch.serving(s, s.window, s.probes[0], 0, lineage);
            for (long open = serving & ~s.closed; open != 0; open &= open - 1) {
                int a = s.candidateOf[Long.numberOfTrailingZeros(open)];
                s.covered[a] = linear(s.bank(a), s.views[a], h, n, lineage, 1);
            }
            if ((serving & s.closed) != 0) {
                s.sink[0] += WindowSearch.search(s, table, serving & s.closed, n, h, lineage, m);
            }
        } else {
            mergeSearch(s, size, h, n, lineage, m);
        }
        for (int a = 0; a < size; a++) {
            BankView now = s.bank(a).view;
            if (now != s.views[a] && !s.views[a].stillExplains(now)) {
                s.covered[a] = again(s, a, h, n, lineage);
            }
        }
        return s.best(maxCandidates);
    }

    /** The search of candidates that do not fit one 64-bank window: merges of {@code order} ranges with holder arrays. */
    private void mergeSearch(LookupScratch s, int size, long[] h, int n, int lineage, int m) {
        for (int a = 0; a < size; a++) {
            s.order[a] = a;
            s.covered[a] = 0;
        }
        int serving = s.partition(0, size, s.probes[0], 0, lineage);
        int closed = 0;
        for (int j = 0; j < serving; j++) {
            int a = s.order[j];
            if (s.views[a].prefixClosed()) {
                s.order[closed++] = a; // closed < j + 1: never overwrites what is still to be read
            } else {
                s.covered[a] = linear(s.bank(a), s.views[a], h, n, lineage, 1);
            }
        }
        if (closed > 0) {
            search(s, closed, n, h, lineage, m);
        }
    }

    /**
     * Decides the coverage of the prefix-closed candidates {@code order[0..closed)} (in bank order),
     * all of which serve {@code h[0]}. The candidates are kept in groups, each a range of
     * {@code order} (in bank order) with a gap {@code (lo, hi)}: all serve {@code h[lo]}, none
     * {@code h[hi]} (or {@code hi == n}). A round probes up to {@code FANOUT - 1} levels spread over
     * every open group's gap, all groups' probes fetched together (their cache misses overlap), and
     * splits each group by how many of its probes it serves. The first round's {@code first} probes
     * were chosen and fetched with {@code h[0]} (at {@code s.at[1..]} and {@code s.probes[1..]}).
     */
    private void search(LookupScratch s, int closed, int n, long[] h, int lineage, int first) {
        s.groups = 0;
        s.addGroup(0, closed, 0, n);
        s.firstProbe[0] = 1;
        s.probeCount[0] = first;
        boolean fetched = true;
        while (s.groups > 0) {
            int groups = s.groups;
            if (!fetched) {
                int probes = s.layOutProbes();
                s.sink[0] += table.getAt(h, s.at, probes, s.probes, s.homes);
                s.keys += probes;
                s.rounds++;
            }
            fetched = false;
            s.nextGroups = 0;
            for (int g = 0; g < groups; g++) {
                splitGroup(s, g, lineage);
            }
            s.swapGroups();
        }
    }

    /**
     * Splits group {@code g} by its probes into the next round's groups; a gap of one level is
     * decided. Coverage is monotone, so each candidate is placed among the probes by a binary search:
     * the group is partitioned by its middle probe, each part by the middle of its half, and so on.
     */
    private static void splitGroup(LookupScratch s, int g, int lineage) {
        split(s, s.from[g], s.to[g], s.firstProbe[g], 0, s.probeCount[g], s.probeCount[g], s.lo[g], s.hi[g], lineage);
    }

    /**
     * Places {@code order[from..to)}, which serve probe {@code jLo - 1} (or the gap's {@code lo}) and
     * not probe {@code jHi} (or {@code hi}), among the probes {@code jLo..jHi) of the group's
     * {@code m} (starting at {@code base}).
     */
    private static void split(
            LookupScratch s, int from, int to, int base, int jLo, int jHi, int m, int lo, int hi, int lineage) {
        while (from < to) {
            if (jLo == jHi) {
                int gapLo = jLo == 0 ? lo : s.at[base + jLo - 1];
                int gapHi = jHi == m ? hi : s.at[base + jHi];
                if (gapHi - gapLo <= 1) {
                    for (int j = from; j < to; j++) {
                        s.covered[s.order[j]] = gapLo + 1;
                    }
                } else {
                    s.addNextGroup(from, to, gapLo, gapHi);
                }
                return;
            }
            int mid = (jLo + jHi) >>> 1;
            int end = s.partition(from, to, s.probes[base + mid], s.at[base + mid], lineage);
            // order[from..end) serve probe mid: place them above it; the rest below it, in this loop
            split(s, from, end, base, mid + 1, jHi, m, lo, hi, lineage);
            from = end;
            jHi = mid;
        }
    }

    /** Coverage of one bank as {@code view} shows it, level by level from {@code from} (which it serves up to). */
    private int linear(Bank bank, BankView view, long[] h, int n, int lineage, int from) {
        int k = from;
        while (k < n && serves(table.get(h[k]), bank, view, k, lineage)) {
            k++;
        }
        return k;
    }

    private static boolean serves(int @Nullable [] holders, Bank bank, BankView view, int level, int lineage) {
        return serving(holders, bank, view, level, lineage) != NO_RECORD;
    }

    /**
     * The record of {@code bank} that serves {@code level} as {@code view} shows it, or {@link
     * Holders#NO_RECORD}: a shared block's many records are searched for the bank's, not read through.
     */
    private static int serving(int @Nullable [] holders, Bank bank, BankView view, int level, int lineage) {
        if (holders == null) {
            return NO_RECORD;
        }
        int from = Holders.count(holders) > 8 ? Holders.firstAtOrAfter(holders, bank.index) : 0;
        return Holders.serving(holders, from, bank.index, view, level, lineage);
    }

    /** Coverage of candidate {@code a} alone, from a fresh view; 0 if it keeps changing under us. */
    private int again(LookupScratch s, int a, long[] h, int n, int lineage) {
        Bank bank = s.bank(a);
        for (int attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
            retries.increment();
            BankView view = bank.view;
            int k = 0;
            if (view.published() && serves(table.get(h[0]), bank, view, 0, lineage)) {
                if (view.prefixClosed()) {
                    int lo = 0;
                    int hi = n;
                    while (hi - lo > 1) {
                        int mid = (lo + hi) >>> 1;
                        if (serves(table.get(h[mid]), bank, view, mid, lineage)) {
                            lo = mid;
                        } else {
                            hi = mid;
                        }
                    }
                    k = lo + 1;
                } else {
                    k = linear(bank, view, h, n, lineage, 1);
                }
            }
            if (view.stillExplains(bank.view)) {
                s.views[a] = view;
                return k;
            }
        }
        return 0;
    }

    /**
     * The slots of {@code h[from..to)} in the bank, as far as it holds them contiguously now. The
     * levels' table lookups are made {@code at.length} at a time with {@link HolderTable#getAt}, so
     * their cache misses overlap: a hint's range is every level of a long chain, and one miss after
     * another cost more than the lookup that found the donor.
     */
    int[] slots(Bank bank, long epoch, long[] h, int from, int to, int lineage) {
        LookupScratch s = scratch.get();
        int chunk = s.at.length;
        for (int attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
            BankView view = bank.view;
            if (!view.published() || view.epoch() != epoch) {
                return new int[0];
            }
            int[] slots = new int[to - from];
            int k = 0;
            levels:
            for (int i = from; i < to; i += chunk) {
                int count = Math.min(chunk, to - i);
                for (int j = 0; j < count; j++) {
                    s.at[j] = i + j;
                }
                s.sink[0] += table.getAt(h, s.at, count, s.probes, s.homes);
                for (int j = 0; j < count; j++) {
                    int[] holders = s.probes[j];
                    int record = serving(holders, bank, view, i + j, lineage);
                    if (record == NO_RECORD || holders == null) {
                        break levels;
                    }
                    slots[k++] = Holders.slot(holders, record);
                }
            }
            Arrays.fill(s.probes, null);
            if (view.stillExplains(bank.view)) {
                return Arrays.copyOf(slots, k);
            }
            retries.increment();
        }
        return new int[0];
    }
}
