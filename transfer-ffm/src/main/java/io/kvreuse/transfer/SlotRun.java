package io.kvreuse.transfer;

/**
 * A run of consecutive blocks: local blocks {@code localBlock ..} pair with remote blocks
 * {@code remoteBlock ..}, {@code blockCount} of them.
 */
public record SlotRun(int localBlock, int remoteBlock, int blockCount) {

    public SlotRun {
        if (localBlock < 0 || remoteBlock < 0 || blockCount <= 0) {
            throw new IllegalArgumentException("a slot run needs non-negative block indices and a positive count: "
                    + localBlock + ", " + remoteBlock + ", " + blockCount);
        }
    }

    /** The same block index on both sides. */
    public static SlotRun same(int block, int blockCount) {
        return new SlotRun(block, block, blockCount);
    }
}
