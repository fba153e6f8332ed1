package io.kvreuse.transfer;

/**
 * A region cut into equal blocks, and the descriptors NIXL prepares for it: one per span of
 * {@code 2^k} consecutive blocks for every level {@code k} and start, so a slot run of any length
 * is named by one descriptor per set bit of its length (NIXL then merges them back into one),
 * instead of one per block.
 */
record BlockGeometry(MemoryKind kind, long baseAddress, long bytesPerBlock, int blockCount, long devId) {

    static BlockGeometry of(MemoryKind kind, long baseAddress, long length, long devId, long bytesPerBlock) {
        if (bytesPerBlock <= 0 || bytesPerBlock > length) {
            throw new IllegalArgumentException("bytesPerBlock must be in (0, " + length + "]: " + bytesPerBlock);
        }
        long blocks = length / bytesPerBlock;
        int levels = 64 - Long.numberOfLeadingZeros(blocks);
        if (levelOffset(blocks, levels) > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("NIXL indexes descriptors with int: too many blocks " + blocks);
        }
        return new BlockGeometry(kind, baseAddress, bytesPerBlock, (int) blocks, devId);
    }

    long blockAddress(int block) {
        return baseAddress + block * bytesPerBlock;
    }

    long length() {
        return blockCount * bytesPerBlock;
    }

    /** Span levels: spans of 1, 2, 4 … blocks up to the largest power of two not above the count. */
    int levels() {
        return 32 - Integer.numberOfLeadingZeros(blockCount);
    }

    /** Descriptors prepared for the region: {@code N - 2^k + 1} spans on each level {@code k}. */
    int descriptorCount() {
        return (int) levelOffset(blockCount, levels());
    }

    /** Index of the span of {@code 2^level} blocks that starts at {@code block}. */
    int spanIndex(int level, int block) {
        return (int) levelOffset(blockCount, level) + block;
    }

    /** Spans on the levels below {@code level}: the sum of {@code N - 2^j + 1} for {@code j < level}. */
    private static long levelOffset(long blocks, int level) {
        return level * (blocks + 1) - ((1L << level) - 1);
    }
}
