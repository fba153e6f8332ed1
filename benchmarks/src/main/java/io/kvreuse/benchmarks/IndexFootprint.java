package io.kvreuse.benchmarks;

import io.kvreuse.index.IndexStats;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.lang.ref.Reference;
import java.util.List;

/**
 * Retained heap per indexed (block, bank) entry: used heap after full GCs with and without a
 * 64 × 16,384 index, for the realistic shared-prompt fleet and for a fleet sharing nothing.
 */
public final class IndexFootprint {

    private IndexFootprint() {}

    public static void main(String[] args) {
        measure("shared prompts (realistic)", true);
        measure("nothing shared (worst case)", false);
    }

    private static void measure(String label, boolean shared) {
        long before = usedAfterGc();
        Fleet fleet = Fleet.build(64, 16_384, 42, shared);
        fleet.heldPaths = List.of();
        long after = usedAfterGc();
        IndexStats stats = fleet.index.stats();
        double measured = (double) (after - before) / stats.entries();
        double estimated = (double) stats.approximateBytes() / stats.entries();
        System.out.printf(
                "%-28s entries=%,d hashes=%,d retained=%,d B  %.1f B/entry measured, %.1f B/entry by stats()%n",
                label, stats.entries(), stats.hashes(), after - before, measured, estimated);
        Reference.reachabilityFence(fleet);
    }

    private static long usedAfterGc() {
        MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        for (int i = 0; i < 4; i++) {
            System.gc();
        }
        return memory.getHeapMemoryUsage().getUsed();
    }
}
