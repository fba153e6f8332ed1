package io.kvreuse.index;

/** Where a search round of the coverage search probes a gap of the chain. */
final class ProbeLevels {

    /**
     * A search round splits a gap of the chain into up to this many parts, each candidate tested
     * against 2 of a round's 3 probes (a binary search over them). Measured against 2, 3, 8 and 16
     * on the 256-block benchmark: fewer probes per round add dependent rounds, more add table
     * lookups (cold cache misses) that cost more than the rounds they save; so did a first round
     * of 16 (three rounds instead of four for a 256-block chain, 12 more cold lookups).
     */
    static final int FANOUT = 4;

    private ProbeLevels() {}

    /** The {@code j}-th of {@code m} probe levels spread evenly inside {@code (lo, hi)}. */
    static int probe(int lo, int hi, int m, int j) {
        return lo + (int) ((long) (hi - lo) * (j + 1) / (m + 1));
    }
}
