package io.kvreuse.bank;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class RankMapTests {

    /**
     * Random stores and clears over a small hash alphabet (so probe runs collide, grow and shrink)
     * against a plain reference of slot -> (hash, position), with a hash at one slot at a time as the
     * write path keeps it: every lookup by hash and by slot agrees with the reference after each step.
     */
    @Test
    void randomStoresAndClearsAgreeWithAReference() {
        SplittableRandom random = new SplittableRandom(7);
        for (int round = 0; round < 20; round++) {
            RankMap map = new RankMap(0);
            Map<Integer, long[]> bySlot = new HashMap<>();
            Map<Long, Integer> byHash = new HashMap<>();
            int slots = 1 + random.nextInt(2_000);
            int alphabet = 1 + random.nextInt(3_000);
            for (int step = 0; step < 5_000; step++) {
                int slot = random.nextInt(slots);
                long hash = random.nextBoolean() ? random.nextInt(alphabet) : random.nextLong();
                if (random.nextInt(3) == 0) {
                    map.clear(slot);
                    long[] old = bySlot.remove(slot);
                    if (old != null) {
                        byHash.remove(old[0]);
                    }
                } else {
                    // as the write path does: the hash's old slot and the target slot emptied first
                    Integer before = byHash.get(hash);
                    if (before != null) {
                        map.clear(before);
                        bySlot.remove(before);
                        byHash.remove(hash);
                    }
                    map.clear(slot);
                    long[] old = bySlot.remove(slot);
                    if (old != null) {
                        byHash.remove(old[0]);
                    }
                    int position = random.nextInt(1_000);
                    map.store(slot, hash, position);
                    bySlot.put(slot, new long[] {hash, position});
                    byHash.put(hash, slot);
                }
                if (step % 97 == 0) {
                    check(map, bySlot, byHash, slots, random);
                }
            }
            check(map, bySlot, byHash, slots, random);
        }
    }

    private static void check(
            RankMap map, Map<Integer, long[]> bySlot, Map<Long, Integer> byHash, int slots, SplittableRandom random) {
        assertThat(map.size()).isEqualTo(byHash.size());
        for (Map.Entry<Long, Integer> e : byHash.entrySet()) {
            assertThat(map.slotOf(e.getKey())).as("slot of %s", e.getKey()).isEqualTo(e.getValue());
        }
        for (int slot = 0; slot < slots; slot++) {
            long[] held = bySlot.get(slot);
            assertThat(map.positionAt(slot)).isEqualTo(held == null ? -1 : (int) held[1]);
        }
        for (int i = 0; i < 50; i++) {
            long absent = random.nextLong();
            if (!byHash.containsKey(absent)) {
                assertThat(map.slotOf(absent)).isEqualTo(-1);
            }
        }
    }

    @Test
    void aLoadedPageLeavesItsEmptySlotsOut() {
        RankMap map = new RankMap(3);
        long[] hashes = new long[RankMap.PAGE];
        int[] positions = new int[RankMap.PAGE];
        java.util.Arrays.fill(positions, -1);
        hashes[5] = 42;
        positions[5] = 2;
        hashes[6] = 0; // hash 0 is a hash like any other where a block is
        positions[6] = 3;
        map.loadPage(2, hashes, positions);
        assertThat(map.size()).isEqualTo(2);
        assertThat(map.slotOf(42)).isEqualTo(2 * RankMap.PAGE + 5);
        assertThat(map.slotOf(0)).isEqualTo(2 * RankMap.PAGE + 6);
        assertThat(map.positionAt(2 * RankMap.PAGE + 6)).isEqualTo(3);
        assertThat(map.positionAt(2 * RankMap.PAGE + 7)).isEqualTo(-1);
        assertThat(map.positionAt(0)).as("a page never loaded holds nothing").isEqualTo(-1);
        assertThat(map.version).isEqualTo(3);
    }
}
