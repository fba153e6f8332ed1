package io.kvreuse.index;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.Test;

/**
 * Writers apply whole batches while readers look up without locks: a reader must only ever see
 * coverages and slot runs that some committed state of each bank had, never part of a batch.
 */
class PrefixIndexConcurrencyTests {

    private static final String DOMAIN = "domain-concurrent";
    private static final int HALF = 64;
    private static final int FULL = 2 * HALF;

    private final long[] chain = new java.util.Random(7).longs(FULL).toArray();
    private final UUID whole = UUID.randomUUID();
    private final UUID halves = UUID.randomUUID();
    private final PrefixIndex index = new PrefixIndex();

    @Test
    void readersNeverSeeHalfABatch() throws Exception {
        index.registerBank(whole, DOMAIN, 1, 4 * FULL);
        index.registerBank(halves, DOMAIN, 1, 4 * FULL);
        index.publish(whole);
        index.publish(halves);
        AtomicBoolean stop = new AtomicBoolean();
        Set<Integer> seenWhole = ConcurrentHashMap.newKeySet();
        Set<Integer> seenHalves = ConcurrentHashMap.newKeySet();
        LongAdder lookups = new LongAdder();
        int readers = 4;
        ExecutorService pool = Executors.newFixedThreadPool(readers + 2);
        CountDownLatch start = new CountDownLatch(1);
        List<Future<?>> tasks = new ArrayList<>();
        tasks.add(pool.submit(() -> writeWhole(start, stop)));
        tasks.add(pool.submit(() -> writeHalves(start, stop)));
        for (int r = 0; r < readers; r++) {
            tasks.add(pool.submit(() -> read(start, stop, seenWhole, seenHalves, lookups)));
        }
        start.countDown();
        Thread.sleep(2_000);
        stop.set(true);
        for (Future<?> task : tasks) {
            task.get(30, TimeUnit.SECONDS); // rethrows any assertion error of a reader or writer
        }
        pool.shutdown();

        assertThat(lookups.sum()).isGreaterThan(1_000);
        // both banks were seen in more than one committed state, so the readers really raced the writers
        assertThat(seenWhole).containsAnyOf(0).containsAnyOf(HALF).isSubsetOf(0, HALF);
        assertThat(seenHalves).contains(HALF, FULL).isSubsetOf(0, HALF, FULL);
    }

    /** Bank "whole" flips between holding blocks 0..63 at slots s and at slots s+128, or nothing. */
    private void writeWhole(CountDownLatch start, AtomicBoolean stop) {
        await(start);
        long epoch = 1;
        for (int round = 0; !stop.get(); round++) {
            index.apply(whole, epoch, stores(0, HALF, 0));
            index.apply(whole, epoch, moves(0, HALF, 2 * FULL)); // remove + store elsewhere: never uncovered
            if (round % 3 == 0) {
                index.reset(whole, ++epoch);
            } else {
                List<BlockEvent> removals = new ArrayList<>();
                for (int i = HALF - 1; i >= 0; i--) {
                    removals.add(new RemovedBlock(chain[i]));
                }
                index.apply(whole, epoch, removals);
            }
        }
    }

    /** Bank "halves" shares the chain: it grows 0..63 → 0..127, shrinks back to 0..63, sometimes resets. */
    private void writeHalves(CountDownLatch start, AtomicBoolean stop) {
        await(start);
        long epoch = 1;
        for (int round = 0; !stop.get(); round++) {
            index.apply(halves, epoch, stores(0, HALF, FULL));
            index.apply(halves, epoch, stores(HALF, FULL, FULL));
            List<BlockEvent> shrink = new ArrayList<>();
            for (int i = HALF; i < FULL; i++) {
                shrink.add(new RemovedBlock(chain[i]));
            }
            index.apply(halves, epoch, shrink);
            if (round % 5 == 0) {
                index.reset(halves, ++epoch);
            }
        }
    }

    private void read(
            CountDownLatch start, AtomicBoolean stop, Set<Integer> seenWhole, Set<Integer> seenHalves, LongAdder n) {
        await(start);
        while (!stop.get()) {
            List<Candidate> candidates = index.lookup(DOMAIN, chain, FULL, null, 4);
            int wholeK = 0;
            int halvesK = 0;
            for (Candidate c : candidates) {
                if (c.bankId().equals(whole)) {
                    wholeK = c.coveredBlocks();
                    assertSlotRun(c, 0, 2 * FULL);
                } else if (c.bankId().equals(halves)) {
                    halvesK = c.coveredBlocks();
                    assertSlotRun(c, FULL, FULL);
                }
            }
            assertThat(wholeK).isIn(0, HALF);
            assertThat(halvesK).isIn(0, HALF, FULL);
            seenWhole.add(wholeK);
            seenHalves.add(halvesK);
            n.increment();
        }
    }

    /** A slot fetch is one committed state too: a full run from one layout, or nothing. */
    private void assertSlotRun(Candidate c, int firstBase, int secondBase) {
        int[] slots = index.slots(c.bankId(), c.bankEpoch(), chain, 0, HALF, null);
        assertThat(slots.length).isIn(0, HALF);
        if (slots.length == HALF) {
            int base = slots[0];
            assertThat(base).isIn(firstBase, secondBase);
            for (int i = 0; i < HALF; i++) {
                assertThat(slots[i]).isEqualTo(base + i);
            }
        }
    }

    private List<BlockEvent> stores(int from, int to, int slotBase) {
        List<BlockEvent> batch = new ArrayList<>();
        for (int i = from; i < to; i++) {
            batch.add(new StoredBlock(chain[i], i == 0 ? null : chain[i - 1], i, slotBase + i, null));
        }
        return batch;
    }

    private List<BlockEvent> moves(int from, int to, int slotBase) {
        List<BlockEvent> batch = new ArrayList<>();
        for (int i = from; i < to; i++) {
            batch.add(new RemovedBlock(chain[i]));
            batch.add(new StoredBlock(chain[i], i == 0 ? null : chain[i - 1], i, slotBase + i, null));
        }
        return batch;
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
