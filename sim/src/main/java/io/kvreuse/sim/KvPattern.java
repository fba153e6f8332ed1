package io.kvreuse.sim;

/**
 * The bytes a simulated engine holds for one block on one rank: a splitmix64 stream seeded by the
 * block's sequence hash and the rank. Any byte delivered to the wrong slot, from the wrong rank or
 * from another block shows up as a mismatch.
 */
public final class KvPattern {

    private KvPattern() {}

    public static byte[] block(long seqHash, int rank, int bytesPerBlock) {
        byte[] out = new byte[bytesPerBlock];
        long state = seqHash ^ (0x9E3779B97F4A7C15L * (rank + 1));
        for (int i = 0; i < bytesPerBlock; i += 8) {
            state += 0x9E3779B97F4A7C15L;
            long z = state;
            z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
            z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
            z ^= z >>> 31;
            for (int b = 0; b < 8 && i + b < bytesPerBlock; b++) {
                out[i + b] = (byte) (z >>> (8 * b));
            }
        }
        return out;
    }

    /** Offset of the first differing byte, or -1 when {@code actual} is the block's pattern. */
    public static int firstMismatch(byte[] actual, long seqHash, int rank) {
        byte[] expected = block(seqHash, rank, actual.length);
        return java.util.Arrays.mismatch(expected, actual);
    }
}
