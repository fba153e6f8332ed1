package io.kvreuse.transfer;

/** A region cut into equal blocks: where block i starts and how long it is. */
record BlockGeometry(MemoryKind kind, long baseAddress, long bytesPerBlock, int blockCount, long devId) {

    static BlockGeometry of(MemoryKind kind, long baseAddress, long length, long devId, long bytesPerBlock) {
        if (bytesPerBlock <= 0 || bytesPerBlock > length) {
            throw new IllegalArgumentException("bytesPerBlock must be in (0, " + length + "]: " + bytesPerBlock);
        }
        long blocks = length / bytesPerBlock;
        if (blocks > Integer.MAX_VALUE) {
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
}
