package io.kvreuse.bank;

import java.util.Arrays;

/**
 * A batch's stores as runs of consecutive slots, for {@code kvreuse_bank_write} (V99): triples
 * (the first store's index in the batch's arrays, from 1; its slot; the run's length), in slot
 * order, each inside one page of {@value #PAGE} slots, store index + t at slot + t. The function
 * moves a run into its page with one slice assignment per column, where it would otherwise take
 * every store alone.
 */
final class PageRuns {

    /** Slots of one {@code bank_page} row. */
    static final int PAGE = 256;

    private PageRuns() {}

    /** The runs of stores at {@code slots} (one slot per store, none twice), flattened. */
    static int[] of(int[] slots) {
        int n = slots.length;
        long[] order = new long[n];
        for (int i = 0; i < n; i++) {
            // slot in the high half, index in the low half: sorting orders by slot (slots are >= 0)
            order[i] = ((long) slots[i] << 32) | i;
        }
        Arrays.sort(order);
        int[] runs = new int[3 * n];
        int count = 0;
        int previousSlot = -2;
        int previousIndex = -2;
        for (long packed : order) {
            int slot = (int) (packed >>> 32);
            int index = (int) packed;
            boolean follows = slot == previousSlot + 1 && index == previousIndex + 1 && slot % PAGE != 0;
            if (follows) {
                runs[count - 1]++;
            } else {
                runs[count++] = index + 1;
                runs[count++] = slot;
                runs[count++] = 1;
            }
            previousSlot = slot;
            previousIndex = index;
        }
        return Arrays.copyOf(runs, count);
    }
}
