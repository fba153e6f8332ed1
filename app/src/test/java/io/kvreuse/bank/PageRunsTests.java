package io.kvreuse.bank;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class PageRunsTests {

    @Test
    void consecutiveStoresAtConsecutiveSlotsAreOneRunPerPage() {
        int[] slots = new int[600];
        for (int i = 0; i < slots.length; i++) {
            slots[i] = 200 + i;
        }
        // slots 200..255 (page 0), 256..511 (page 1), 512..799 (pages 2 and 3)
        assertThat(PageRuns.of(slots)).containsExactly(1, 200, 56, 57, 256, 256, 313, 512, 256, 569, 768, 32);
    }

    @Test
    void aRunBreaksWhereTheSlotOrTheStoreIndexDoesNotFollow() {
        // stores 1..4 at slots 10, 11, 13, 12: 10-11 is a run; 12 is store 4, 13 is store 3
        assertThat(PageRuns.of(new int[] {10, 11, 13, 12})).containsExactly(1, 10, 2, 4, 12, 1, 3, 13, 1);
        // slots descending: no two stores follow each other
        assertThat(PageRuns.of(new int[] {3, 2, 1})).containsExactly(3, 1, 1, 2, 2, 1, 1, 3, 1);
        assertThat(PageRuns.of(new int[] {})).isEmpty();
    }

    /** Against the definition, on random batches of runs, shuffles and page crossings. */
    @Test
    void runsCoverEveryStoreOnceInSlotOrderInsideOnePage() {
        SplittableRandom random = new SplittableRandom(7);
        for (int round = 0; round < 2_000; round++) {
            List<Integer> pool = new ArrayList<>();
            int capacity = 1 + random.nextInt(2_000);
            for (int s = 0; s < capacity; s++) {
                pool.add(s);
            }
            Collections.shuffle(pool, new java.util.Random(random.nextLong()));
            List<Integer> chosen = new ArrayList<>();
            int n = random.nextInt(Math.min(capacity, 700) + 1);
            // mostly consecutive blocks of slots, as engines fill them, sometimes shuffled
            int at = random.nextInt(capacity);
            java.util.Set<Integer> used = new java.util.HashSet<>();
            while (chosen.size() < n) {
                int slot = random.nextInt(4) == 0 ? pool.get(random.nextInt(capacity)) : at;
                at = (at + 1) % capacity;
                if (used.add(slot)) {
                    chosen.add(slot);
                }
            }
            if (random.nextInt(5) == 0) {
                Collections.shuffle(chosen, new java.util.Random(random.nextLong()));
            }
            int[] slots = chosen.stream().mapToInt(Integer::intValue).toArray();
            int[] runs = PageRuns.of(slots);
            assertThat(runs.length % 3).isZero();
            boolean[] covered = new boolean[slots.length];
            int previousEnd = -1;
            for (int r = 0; r < runs.length; r += 3) {
                int index = runs[r] - 1;
                int slot = runs[r + 1];
                int length = runs[r + 2];
                assertThat(length).isPositive();
                assertThat(slot).isGreaterThan(previousEnd); // slot order, no overlap
                assertThat(slot / PageRuns.PAGE).isEqualTo((slot + length - 1) / PageRuns.PAGE);
                for (int t = 0; t < length; t++) {
                    assertThat(slots[index + t]).isEqualTo(slot + t);
                    assertThat(covered[index + t]).isFalse();
                    covered[index + t] = true;
                }
                // maximal: the next run does not simply continue this one
                if (r + 3 < runs.length) {
                    boolean continues = runs[r + 3] == runs[r] + length
                            && runs[r + 4] == slot + length
                            && runs[r + 4] % PageRuns.PAGE != 0;
                    assertThat(continues).isFalse();
                }
                previousEnd = slot + length - 1;
            }
            for (boolean c : covered) {
                assertThat(c).isTrue();
            }
        }
    }
}
