package io.kvreuse.transfer;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/** Shared-memory regions unique to one test, unmapped and unlinked afterwards. */
final class TestMemory implements AutoCloseable {

    private final List<SharedMemoryRegion> regions = new ArrayList<>();

    SharedMemoryRegion create(long size) {
        SharedMemoryRegion region = SharedMemoryRegion.create("test-" + UUID.randomUUID(), size);
        regions.add(region);
        return region;
    }

    /** Closes after the agents deregistered the regions. */
    @Override
    public void close() {
        for (SharedMemoryRegion region : regions) {
            region.close();
            region.unlink();
        }
        regions.clear();
    }

    /** Deterministic bytes for one block, different per seed and block, as hashes would be. */
    static byte[] pattern(int seed, int block, int length) {
        byte[] bytes = new byte[length];
        int state = seed * 31 + block * 1_000_003 + 17;
        for (int i = 0; i < length; i++) {
            state = state * 1_103_515_245 + 12_345;
            bytes[i] = (byte) (state >>> 16);
        }
        return bytes;
    }

    static void fillBlocks(SharedMemoryRegion region, int seed, int blocks, int bytesPerBlock) {
        for (int block = 0; block < blocks; block++) {
            region.write((long) block * bytesPerBlock, pattern(seed, block, bytesPerBlock));
        }
    }
}
