package io.kvreuse.agent;

import io.kvreuse.protocol.TransferOrder;
import io.kvreuse.transfer.SlotRun;
import java.util.ArrayList;
import java.util.List;

/**
 * A part's block mapping, checked before any memory is touched: source runs and destination runs
 * hold the same number of blocks of the same size, inside both regions, and match the part's bytes.
 * Runs are paired into {@link SlotRun}s with the destination as the local (initiating) side.
 */
record SlotPlan(List<SlotRun> runs, long bytesPerBlock, int blocks) {

    static SlotPlan of(TransferOrder.Part part, long sourceSize, long destinationSize) {
        TransferOrder.Endpoint src = part.source();
        TransferOrder.Endpoint dst = part.destination();
        long bpb = src.bytesPerBlock();
        if (bpb <= 0 || dst.bytesPerBlock() != bpb) {
            throw invalid("block sizes differ: source " + bpb + ", destination " + dst.bytesPerBlock());
        }
        List<int[]> from = runs(src.slotRuns(), sourceSize, bpb, "source");
        List<int[]> to = runs(dst.slotRuns(), destinationSize, bpb, "destination");
        List<SlotRun> paired = pair(from, to);
        int blocks = paired.stream().mapToInt(SlotRun::blockCount).sum();
        if ((long) blocks * bpb != part.bytes()) {
            throw invalid(blocks + " blocks of " + bpb + " bytes do not make the part's " + part.bytes() + " bytes");
        }
        return new SlotPlan(paired, bpb, blocks);
    }

    private static List<int[]> runs(List<List<Integer>> runs, long regionSize, long bpb, String side) {
        List<int[]> out = new ArrayList<>();
        for (List<Integer> run : runs) {
            if (run.size() != 2 || run.get(0) < 0 || run.get(1) <= 0) {
                throw invalid(side + " slot run " + run + " is not [start, count]");
            }
            if ((long) (run.get(0) + (long) run.get(1)) * bpb > regionSize) {
                throw invalid(side + " slot run " + run + " ends past the region's " + regionSize / bpb + " blocks");
            }
            out.add(new int[] {run.get(0), run.get(1)});
        }
        if (out.isEmpty()) {
            throw invalid(side + " has no slot runs");
        }
        return out;
    }

    /** Walks both run lists at once, cutting where either side's run ends. */
    private static List<SlotRun> pair(List<int[]> from, List<int[]> to) {
        List<SlotRun> out = new ArrayList<>();
        int i = 0;
        int j = 0;
        int usedFrom = 0;
        int usedTo = 0;
        while (i < from.size() && j < to.size()) {
            int n = Math.min(from.get(i)[1] - usedFrom, to.get(j)[1] - usedTo);
            out.add(new SlotRun(to.get(j)[0] + usedTo, from.get(i)[0] + usedFrom, n));
            usedFrom += n;
            usedTo += n;
            if (usedFrom == from.get(i)[1]) {
                i++;
                usedFrom = 0;
            }
            if (usedTo == to.get(j)[1]) {
                j++;
                usedTo = 0;
            }
        }
        if (i < from.size() || j < to.size()) {
            throw invalid("source and destination runs hold different numbers of blocks");
        }
        return out;
    }

    private static PartRefusedException invalid(String detail) {
        return new PartRefusedException(detail);
    }
}
