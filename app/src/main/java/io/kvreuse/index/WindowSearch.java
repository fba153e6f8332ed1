package io.kvreuse.index;

import java.lang.invoke.VarHandle;
import org.jspecify.annotations.Nullable;

/**
 * The prefix-closed search of {@link CoverageSearch} for candidates whose bank indexes all fall in
 * one 64-bank window (a domain of up to 64 banks, the common case): a group of candidates is one
 * {@code long} of window bits, and splitting it by a probe is a bit operation instead of a merge of
 * the group with the probe's holder array. A probe of a shared block whose summary is at that level
 * decides the group with one AND; the banks the summary leaves open are looked up in the records
 * (each by binary search when they are few, else by one pass over the records in the window), so
 * a probe costs O(records in the window), not O(candidates). The decisions are those of the merge,
 * bank by bank, in the same order of probes.
 */
final class WindowSearch {

    private WindowSearch() {}

    /**
     * The banks of {@code set} (window bits from {@code s.base}) that serve the holder array at
     * {@code level}. A summary bit decides its bank; other banks go through
     * {@link LookupScratch#serves}. The summary and records are read plainly, then one acquire
     * fence orders them before the views read after them.
     */
    static long serving(LookupScratch s, long set, int @Nullable [] holders, int level, int lineage) {
        if (holders == null || set == 0) {
            return 0;
        }
        int summary = Holders.summary(holders);
        long served =
                summary >= 0 && holders[summary] == level ? set & Holders.summaryWindow(holders, summary, s.base) : 0;
        long open = set & ~served;
        if (open != 0) {
            served |= records(s, open, holders, level, lineage);
        }
        VarHandle.acquireFence();
        return served;
    }

    /** The banks of {@code open} that serve the level by their records. */
    private static long records(LookupScratch s, long open, int[] holders, int level, int lineage) {
        int count = Holders.count(holders);
        int base = s.base;
        long served = 0;
        if (Long.bitCount(open) * 8 < count) {
            for (long bits = open; bits != 0; bits &= bits - 1) {
                int bit = Long.numberOfTrailingZeros(bits);
                int bank = base + bit;
                int r = Holders.firstAtOrAfter(holders, bank);
                if (r < count && s.serves(holders, r, count, bank, s.candidateOf[bit], level, lineage)) {
                    served |= 1L << bit;
                }
            }
            return served;
        }
        int last = base + 63 - Long.numberOfLeadingZeros(open);
        int r = count > 16 ? Holders.firstAtOrAfter(holders, base + Long.numberOfTrailingZeros(open)) : 0;
        for (; r < count; r++) {
            int bank = Holders.bank(holders[Holders.offset(r)]);
            if (bank > last) {
                break;
            }
            int bit = bank - base;
            // the first record of an open bank decides it (and the bank's later records are skipped)
            if (bit >= 0 && ((open >>> bit) & 1) != 0) {
                open &= ~(1L << bit);
                if (s.serves(holders, r, count, bank, s.candidateOf[bit], level, lineage)) {
                    served |= 1L << bit;
                }
            }
        }
        return served;
    }

    /**
     * Decides the coverage of the prefix-closed candidates {@code closed} (window bits), all of
     * which serve {@code h[0]}, as {@link CoverageSearch}'s group search does with ranges of its
     * order: a group is a set of candidates with a gap {@code (lo, hi)}; a round probes up to
     * {@code FANOUT - 1} levels spread over every open group's gap, all fetched together, and
     * splits each group by its probes. The first round's {@code first} probes were fetched with
     * {@code h[0]} (at {@code s.at[1..]} and {@code s.probes[1..]}).
     */
    static int search(LookupScratch s, HolderTable table, long closed, int n, long[] h, int lineage, int first) {
        s.groups = 0;
        s.sets[0] = closed;
        s.addGroup(0, 0, 0, n);
        s.firstProbe[0] = 1;
        s.probeCount[0] = first;
        boolean fetched = true;
        int touched = 0;
        while (s.groups > 0) {
            int groups = s.groups;
            if (!fetched) {
                int probes = s.layOutProbes();
                touched += table.getAt(h, s.at, probes, s.probes, s.homes);
                s.keys += probes;
                s.rounds++;
            }
            fetched = false;
            s.nextGroups = 0;
            for (int g = 0; g < groups; g++) {
                int m = s.probeCount[g];
                split(s, s.sets[g], s.firstProbe[g], 0, m, m, s.lo[g], s.hi[g], lineage);
            }
            s.swapGroups();
        }
        return touched;
    }

    /**
     * Places {@code set}, which serves probe {@code jLo - 1} (or the gap's {@code lo}) and not probe
     * {@code jHi} (or {@code hi}), among the probes {@code jLo..jHi)} of the group's {@code m}
     * (starting at {@code base}): a binary search over the probes, as the merge does.
     */
    private static void split(
            LookupScratch s, long set, int base, int jLo, int jHi, int m, int lo, int hi, int lineage) {
        while (set != 0) {
            if (jLo == jHi) {
                int gapLo = jLo == 0 ? lo : s.at[base + jLo - 1];
                int gapHi = jHi == m ? hi : s.at[base + jHi];
                if (gapHi - gapLo <= 1) {
                    for (long bits = set; bits != 0; bits &= bits - 1) {
                        s.covered[s.candidateOf[Long.numberOfTrailingZeros(bits)]] = gapLo + 1;
                    }
                } else {
                    s.nextSets[s.nextGroups] = set;
                    s.addNextGroup(0, 0, gapLo, gapHi);
                }
                return;
            }
            int mid = (jLo + jHi) >>> 1;
            long above = serving(s, set, s.probes[base + mid], s.at[base + mid], lineage);
            split(s, above, base, mid + 1, jHi, m, lo, hi, lineage);
            set &= ~above;
            jHi = mid;
        }
    }
}
