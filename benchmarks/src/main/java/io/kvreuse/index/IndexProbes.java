package io.kvreuse.index;

/** The index's package-private lookup counters, for the benchmarks (compiled here with the index). */
public final class IndexProbes {

    private IndexProbes() {}

    /** This thread's {lookups, table lookups, fetch rounds} so far. */
    public static long[] counters(PrefixIndex index) {
        return index.threadLookupCounters();
    }

    /** Table slots a lookup of the hash reads: its home slot plus those it probes past; negated if absent. */
    public static int slotsRead(PrefixIndex index, long seqHash) {
        return index.tableSlotsRead(seqHash);
    }
}
