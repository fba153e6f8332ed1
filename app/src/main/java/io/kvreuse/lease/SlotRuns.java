package io.kvreuse.lease;

import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;

/** Slot runs {@code [[start, count], …]}: their JSON and list forms, validation and expansion. */
final class SlotRuns {

    private SlotRuns() {}

    static String json(int[][] runs) {
        return Arrays.stream(runs).map(r -> "[" + r[0] + "," + r[1] + "]").collect(Collectors.joining(",", "[", "]"));
    }

    static int[][] of(List<List<Integer>> runs) {
        return runs.stream()
                .map(r -> r.stream().mapToInt(Integer::intValue).toArray())
                .toArray(int[][]::new);
    }

    static List<List<Integer>> list(int[][] runs) {
        return Arrays.stream(runs).map(r -> List.of(r[0], r[1])).toList();
    }

    static long total(int[][] runs) {
        long n = 0;
        for (int[] r : runs) {
            n += r[1];
        }
        return n;
    }

    /** Problems of a destination's runs (pairs, non-negative starts, positive counts, no overlap), or null. */
    static @org.jspecify.annotations.Nullable String problem(int[][] runs, int expectedBlocks) {
        for (int[] r : runs) {
            if (r.length != 2 || r[0] < 0 || r[1] < 1 || (long) r[0] + r[1] > Integer.MAX_VALUE) {
                return "every run is [start >= 0, count >= 1]";
            }
        }
        if (total(runs) != expectedBlocks) {
            return "the runs cover " + total(runs) + " slots; the lease fetches " + expectedBlocks + " blocks";
        }
        int[][] sorted = runs.clone();
        Arrays.sort(sorted, (a, b) -> Integer.compare(a[0], b[0]));
        for (int i = 1; i < sorted.length; i++) {
            if (sorted[i - 1][0] + sorted[i - 1][1] > sorted[i][0]) {
                return "runs overlap";
            }
        }
        return null;
    }

    static int[] expand(int[][] runs, int limit) {
        int[] slots = new int[limit];
        int i = 0;
        for (int[] r : runs) {
            for (int k = 0; k < r[1] && i < limit; k++) {
                slots[i++] = r[0] + k;
            }
        }
        return i == limit ? slots : Arrays.copyOf(slots, i);
    }
}
