package io.kvreuse.index;

/**
 * Counters for metrics, read without locking (each value is exact, together they may straddle a write).
 *
 * @param entries indexed (block, bank) entries
 * @param hashes distinct sequence hashes
 * @param banks registered banks
 * @param publishedBanks banks visible to lookups
 * @param approximateBytes estimated retained heap of the index structures
 * @param readRetries lookups of a bank redone because a concurrent batch purged what they read
 */
public record IndexStats(
        long entries, long hashes, int banks, int publishedBanks, long approximateBytes, long readRetries) {}
