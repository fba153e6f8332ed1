package io.kvreuse.index;

import static io.kvreuse.index.Holders.NO_RECORD;

import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.jspecify.annotations.Nullable;

/** Per-lookup state, reused by the thread's next lookup: the candidates, their views, coverage and search order. */
final class LookupScratch {
    /** The index's banks by index, as the lookup read them (candidates are found through {@link #bankIndex}). */
    @Nullable
    Bank @Nullable [] all;

    BankView[] views = new BankView[16];
    int[] covered = new int[16];
    int[] order = new int[16];
    int[] spare = new int[16];
    /** Per candidate, its bank's index (the merge key, read without touching the bank). */
    int[] bankIndex = new int[16];
    /** Per candidate, its bank id's halves: ties are ordered without touching the banks. */
    long[] idHi = new long[16];

    long[] idLo = new long[16];

    long lookups;
    long keys;
    long rounds;

    int[] at = new int[4 * ProbeLevels.FANOUT];
    int[][] probes = new int[4 * ProbeLevels.FANOUT][];
    /** Per probe, its table slot (scratch of {@link HolderTable#getAt}). */
    int[] homes = new int[4 * ProbeLevels.FANOUT];
    /** Keeps the table's cache-warming reads from being optimised away. */
    final int[] sink = new int[1];

    int size;

    /**
     * The candidates as bits of a 64-bank window starting at bank index {@link #base} (bit
     * {@code index - base}), when they all fit in one ({@link #fits}); the searches of a lookup
     * whose candidates fit run on these words instead of merging {@link #order}.
     */
    boolean fits;

    int base;
    long window;
    /** The window's candidates whose views are prefix-closed. */
    long closed;
    /** Per window bit, its candidate. */
    final int[] candidateOf = new int[64];
    /** Per group, its candidates as window bits (when {@link #fits}). */
    long[] sets = new long[16];

    long[] nextSets = new long[16];
    // this round's groups and the next round's, as parallel arrays
    int groups;
    int[] from = new int[16];
    int[] to = new int[16];
    int[] lo = new int[16];
    int[] hi = new int[16];
    int[] firstProbe = new int[16];
    int[] probeCount = new int[16];
    int nextGroups;
    int[] nextFrom = new int[16];
    int[] nextTo = new int[16];
    int[] nextLo = new int[16];
    int[] nextHi = new int[16];

    void addGroup(int start, int stop, int gapLo, int gapHi) {
        from[groups] = start;
        to[groups] = stop;
        lo[groups] = gapLo;
        hi[groups] = gapHi;
        groups++;
    }

    /** Groups are disjoint ranges of candidates, so there are never more than {@link #size}. */
    void addNextGroup(int start, int stop, int gapLo, int gapHi) {
        nextFrom[nextGroups] = start;
        nextTo[nextGroups] = stop;
        nextLo[nextGroups] = gapLo;
        nextHi[nextGroups] = gapHi;
        nextGroups++;
    }

    void swapGroups() {
        int[] t = from;
        from = nextFrom;
        nextFrom = t;
        t = to;
        to = nextTo;
        nextTo = t;
        t = lo;
        lo = nextLo;
        nextLo = t;
        t = hi;
        hi = nextHi;
        nextHi = t;
        long[] u = sets;
        sets = nextSets;
        nextSets = u;
        groups = nextGroups;
    }

    /**
     * Lays out this round's probes: up to {@link ProbeLevels#FANOUT} - 1 levels spread over each
     * group's open gap, in {@link #at} from each group's {@link #firstProbe}; returns their count.
     */
    int layOutProbes() {
        int probes = 0;
        for (int g = 0; g < groups; g++) {
            int gapLo = lo[g];
            int gapHi = hi[g];
            int m = Math.min(ProbeLevels.FANOUT - 1, gapHi - gapLo - 1);
            firstProbe[g] = probes;
            probeCount[g] = m;
            ensureProbes(probes + m);
            for (int j = 0; j < m; j++) {
                at[probes++] = ProbeLevels.probe(gapLo, gapHi, m, j);
            }
        }
        return probes;
    }

    void ensureProbes(int count) {
        if (count > at.length) {
            int grown = Math.max(count, at.length * 2);
            at = Arrays.copyOf(at, grown);
            probes = Arrays.copyOf(probes, grown);
            homes = new int[grown];
        }
    }

    /** Collects the published banks of the domain holding {@code h[0]} and their views. */
    int discover(int[] first, @Nullable Bank[] all, int domain) {
        this.all = all;
        int count = Holders.count(first);
        if (views.length < count) {
            int grown = Math.max(count, views.length * 2);
            views = new BankView[grown];
            covered = new int[grown];
            order = new int[grown];
            spare = new int[grown];
            bankIndex = new int[grown];
            idHi = new long[grown];
            idLo = new long[grown];
            from = new int[grown];
            to = new int[grown];
            lo = new int[grown];
            hi = new int[grown];
            firstProbe = new int[grown];
            probeCount = new int[grown];
            nextFrom = new int[grown];
            nextTo = new int[grown];
            nextLo = new int[grown];
            nextHi = new int[grown];
            sets = new long[grown];
            nextSets = new long[grown];
        }
        size = 0;
        fits = true;
        window = 0;
        closed = 0;
        int summary = Holders.summary(first);
        if (summary >= 0 && Holders.summarizedCount(first, summary) == count) {
            // every record's bank is in the summary: its bit words list them in bank order
            int summaryBase = first[summary + 1];
            int words = Holders.summaryWords(first);
            for (int w = 0; w < words; w++) {
                for (int bits = first[summary + 2 + w]; bits != 0; bits &= bits - 1) {
                    consider(all, summaryBase + 32 * w + Integer.numberOfTrailingZeros(bits), domain);
                }
            }
            return size;
        }
        int previous = -1;
        for (int r = 0; r < count; r++) {
            int index = Holders.bank(Holders.bankWord(first, r));
            if (index != previous) {
                consider(all, index, domain);
            }
            previous = index;
        }
        return size;
    }

    /** Adds the bank of that index as a candidate if it is of the domain and published. */
    private void consider(@Nullable Bank[] all, int index, int domain) {
        if (index >= all.length) {
            return;
        }
        Bank bank = all[index];
        if (bank == null || bank.domain != domain) {
            return;
        }
        BankView view = bank.view;
        if (view.published()) {
            views[size] = view;
            if (size == 0) {
                base = index;
            }
            int bit = index - base;
            if (bit < 64) {
                window |= 1L << bit;
                closed |= view.prefixClosed() ? 1L << bit : 0;
                candidateOf[bit] = size;
            } else {
                fits = false;
            }
            bankIndex[size] = index;
            idHi[size] = bank.idHi;
            idLo[size] = bank.idLo;
            size++;
        }
    }

    /**
     * Reorders {@code order[from..to)} (kept in bank order) so that the candidates serving
     * {@code h[level]} come first, and returns where the others start. A merge of the candidates'
     * bank indexes with the records: a bank whose only record is committed is decided from its
     * fields whatever its view (the common case, no view read); a pending record goes through
     * {@link #serving}. A bank whose bit is set in the array's summary (at this level) serves
     * without any record read; the others of a summarized array are found by binary search. The records are read plainly, then one acquire fence orders them before
     * the views read after them (as acquire-reading each bank word would).
     */
    int partition(int from, int to, int @Nullable [] holders, int level, int lineage) {
        if (holders == null) {
            return from;
        }
        int count = Holders.count(holders);
        int summary = Holders.summary(holders);
        boolean summarized = summary >= 0 && holders[summary] == level;
        boolean search = summarized || (to - from) * 8 < count;
        // up to 64 banks' summary bits are held in a register (loads from holders would be
        // repeated after each store to order, which the compiler cannot tell apart from holders)
        boolean wide = summarized && Holders.summaryWords(holders) > 2;
        int base = summarized ? holders[summary + 1] : 0;
        long bits = summarized && !wide ? Holders.summaryBits(holders, summary) : 0;
        int r = 0;
        int kept = from;
        int dropped = 0;
        for (int j = from; j < to; j++) {
            int a = order[j];
            int bank = bankIndex[a];
            if (summarized) {
                int bit = bank - base;
                if (wide
                        ? Holders.summarized(holders, summary, bank)
                        : bit >= 0 && bit < 64 && ((bits >>> bit) & 1) != 0) {
                    order[kept++] = a;
                    continue;
                }
            }
            if (search) {
                r = Holders.firstAtOrAfter(holders, bank);
            } else {
                while (r < count && Holders.bank(holders[Holders.offset(r)]) < bank) {
                    r++;
                }
            }
            if (r < count && serves(holders, r, count, bank, a, level, lineage)) {
                order[kept++] = a;
            } else {
                spare[dropped++] = a;
            }
        }
        VarHandle.acquireFence();
        System.arraycopy(spare, 0, order, kept, dropped);
        return kept;
    }

    /** Whether candidate {@code a} (of bank index {@code bank}, whose first record is at or after {@code r}) serves the level. */
    boolean serves(int[] holders, int r, int count, int bank, int a, int level, int lineage) {
        int at = Holders.offset(r);
        int word = holders[at];
        if (word == bank && (r + 1 == count || Holders.bank(holders[at + Holders.STRIDE]) != bank)) {
            int blockLineage = holders[at + 3];
            return holders[at + 1] != Holders.REMOVED
                    && holders[at + 2] == level
                    && (blockLineage == LineageIds.NONE || blockLineage == lineage);
        }
        return Holders.bank(word) == bank && Holders.serving(holders, r, bank, views[a], level, lineage) != NO_RECORD;
    }

    List<Candidate> best(int maxCandidates) {
        int[] top = spare;
        int limit = Math.min(maxCandidates, size);
        int n = 0;
        for (int a = 0; a < size; a++) {
            if (covered[a] == 0 || (n == limit && !better(a, top[n - 1]))) {
                continue;
            }
            int at = n == limit ? n - 1 : n++;
            while (at > 0 && better(a, top[at - 1])) {
                top[at] = top[at - 1];
                at--;
            }
            top[at] = a;
        }
        List<Candidate> result = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            int a = top[i];
            result.add(new Candidate(bank(a).id, views[a].epoch(), covered[a]));
        }
        // drop the references, so a dropped bank or a removed block's array is not kept alive by a
        // thread's scratch (views hold no reference, they may stay)
        all = null;
        Arrays.fill(probes, null);
        return result;
    }

    /** Candidate {@code a}'s bank. */
    Bank bank(int a) {
        return java.util.Objects.requireNonNull(all)[bankIndex[a]];
    }

    private boolean better(int a, int b) {
        return covered[a] > covered[b]
                || (covered[a] == covered[b] && (idHi[a] < idHi[b] || (idHi[a] == idHi[b] && idLo[a] < idLo[b])));
    }
}
