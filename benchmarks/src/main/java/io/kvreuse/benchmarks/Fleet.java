package io.kvreuse.benchmarks;

import io.kvreuse.index.BlockEvent;
import io.kvreuse.index.PrefixIndex;
import io.kvreuse.index.StoredBlock;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.UUID;

/**
 * A synthetic fleet shaped like real traffic: every bank is filled to capacity with conversations
 * that start from one of a few system prompts (prompt i is held by every (i+1)-th bank, so the
 * most popular prefix sits in all banks), then a conversation trunk, then two diverging next
 * turns (tree-shaped). Hashes are chained from the root like engines' sequence hashes, so the same
 * prompt has the same hashes in every bank.
 */
final class Fleet {

    static final String DOMAIN = "bench-domain";
    static final int PROMPTS = 8;

    final PrefixIndex index;
    final UUID[] bankIds;
    final long[][] prompts;
    /** Root-aligned chains of (prompt + trunk + first branch) that some bank holds entirely. */
    List<long[]> heldPaths = new ArrayList<>();

    long entries;
    private final SplittableRandom random;
    private long fresh = 1L << 40;

    private Fleet(int banks, long seed) {
        this.random = new SplittableRandom(seed);
        this.index = new PrefixIndex();
        this.bankIds = new UUID[banks];
        this.prompts = new long[PROMPTS][];
        for (int p = 0; p < PROMPTS; p++) {
            prompts[p] = extend(new long[0], 16 + 8 * p);
        }
    }

    /** Builds {@code banks × capacity} entries; {@code shared=false} gives every bank its own prompts (worst case). */
    static Fleet build(int banks, int capacity, long seed, boolean shared) {
        Fleet fleet = new Fleet(banks, seed);
        for (int b = 0; b < banks; b++) {
            fleet.fillBank(b, capacity, shared);
        }
        return fleet;
    }

    static long chain(long parent, long token) {
        long h = parent * 0x9E3779B97F4A7C15L + token;
        h ^= h >>> 31;
        h *= 0xBF58476D1CE4E5B9L;
        return h ^ (h >>> 29);
    }

    /** The chain extended by {@code n} blocks never seen before. */
    long[] extend(long[] prefix, int n) {
        long[] chain = java.util.Arrays.copyOf(prefix, prefix.length + n);
        for (int i = prefix.length; i < chain.length; i++) {
            chain[i] = chain(i == 0 ? 0x5EED : chain[i - 1], fresh++);
        }
        return chain;
    }

    int nextInt(int from, int to) {
        return random.nextInt(from, to);
    }

    private void fillBank(int b, int capacity, boolean shared) {
        UUID id = new UUID(random.nextLong(), random.nextLong());
        bankIds[b] = id;
        index.registerBank(id, DOMAIN, 1, capacity);
        Batcher batcher = new Batcher(id, capacity);
        List<long[]> held = new ArrayList<>();
        for (int p = 0; p < PROMPTS; p++) {
            if (b % (p + 1) == 0) {
                long[] prompt = shared ? prompts[p] : extend(new long[0], prompts[p].length);
                batcher.add(prompt, 0);
                held.add(prompt);
            }
        }
        while (batcher.free() > 0) {
            long[] prompt = held.get(random.nextInt(held.size()));
            long[] trunk = extend(prompt, nextInt(64, 448));
            batcher.add(trunk, prompt.length);
            long[] first = extend(trunk, nextInt(8, 33));
            batcher.add(first, trunk.length);
            batcher.add(extend(trunk, nextInt(8, 33)), trunk.length);
            if (batcher.free() > 0) {
                heldPaths.add(first);
            }
        }
        batcher.flush();
        index.publish(id);
        entries += capacity;
    }

    /** Collects stored blocks into batches of 512 events, stopping at the bank's capacity. */
    private final class Batcher {
        private final UUID bank;
        private final int capacity;
        private final List<BlockEvent> batch = new ArrayList<>();
        private int slot;

        Batcher(UUID bank, int capacity) {
            this.bank = bank;
            this.capacity = capacity;
        }

        int free() {
            return capacity - slot;
        }

        void add(long[] chain, int from) {
            for (int i = from; i < chain.length && slot < capacity; i++) {
                batch.add(new StoredBlock(chain[i], i == 0 ? null : chain[i - 1], i, slot++, null));
                if (batch.size() == 512) {
                    flush();
                }
            }
        }

        void flush() {
            index.apply(bank, 1, batch);
            batch.clear();
        }
    }
}
