package io.kvreuse.agent.kvevents;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The primitive depth map behaves as a {@code HashMap<Long, Integer>} under random puts, removals and clears. */
class BlockDepthsTests {

    @Test
    void randomOperationsAgreeWithAHashMap() {
        SplittableRandom random = new SplittableRandom(7);
        BlockDepths depths = new BlockDepths(16);
        Map<Long, Integer> model = new HashMap<>();
        // a small key space makes collisions, overwrites and removals of present keys frequent
        long[] keys = new long[3000];
        for (int i = 0; i < keys.length; i++) {
            keys[i] = i % 3 == 0 ? i : random.nextLong();
        }
        keys[1] = 0;
        keys[2] = -1;
        keys[4] = Long.MIN_VALUE;
        for (int op = 0; op < 300_000; op++) {
            long key = keys[random.nextInt(keys.length)];
            int dice = random.nextInt(100);
            if (dice < 55) {
                int depth = random.nextInt(1 << 20);
                depths.put(key, depth);
                model.put(key, depth);
            } else if (dice < 95) {
                depths.remove(key);
                model.remove(key);
            } else if (dice == 99 && random.nextInt(50) == 0) {
                depths.clear();
                model.clear();
            }
            if (op % 1000 == 0) {
                for (long k : keys) {
                    assertThat(depths.get(k)).isEqualTo(model.getOrDefault(k, -1));
                }
            }
            assertThat(depths.size()).isEqualTo(model.size());
        }
        for (long k : keys) {
            assertThat(depths.get(k)).isEqualTo(model.getOrDefault(k, -1));
        }
    }
}
