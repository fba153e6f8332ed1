package io.kvreuse.transfer;

import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.lang.foreign.MemorySegment;
import java.util.List;

/**
 * Checks a request against what Java already knows before any native call, so caller mistakes get
 * the same exception whichever NIXL error convention the library follows, and turns slot runs into
 * NIXL's descriptor index arrays (spans of {@link BlockGeometry}).
 */
final class TransferRequests {

    private TransferRequests() {}

    /** What a validated request needs: index pairs to pass and descriptors after NIXL merges. */
    record Shape(int pieces, int mergedRuns) {}

    /** Checks the request and measures it, in one pass over its runs. */
    static Shape validate(AgentContext ctx, TransferRequest request) {
        BlockSet local = request.local();
        BlockSet remote = request.remote();
        if (!local.isLocal()) {
            throw invalid(ctx, "the local block set belongs to peer " + local.peerName());
        }
        if (remote.isLocal()) {
            throw invalid(ctx, "the remote block set is local: prepare it from a peer or loopback()");
        }
        if (local.agent().context() != ctx || remote.agent().context() != ctx) {
            throw invalid(ctx, "the block sets were prepared by another agent");
        }
        if (local.bytesPerBlock() != remote.bytesPerBlock()) {
            throw invalid(ctx, "block sizes differ: " + local.bytesPerBlock() + " != " + remote.bytesPerBlock());
        }
        int localBlocks = local.blockCount();
        int remoteBlocks = remote.blockCount();
        int pieces = 0;
        int merged = 0;
        long nextLocal = -1;
        long nextRemote = -1;
        for (SlotRun run : request.runs()) {
            long localEnd = (long) run.localBlock() + run.blockCount();
            long remoteEnd = (long) run.remoteBlock() + run.blockCount();
            if (localEnd > localBlocks || remoteEnd > remoteBlocks) {
                throw invalid(ctx, run + " exceeds " + localBlocks + " local / " + remoteBlocks + " remote blocks");
            }
            pieces += Integer.bitCount(run.blockCount());
            if (run.localBlock() != nextLocal || run.remoteBlock() != nextRemote) {
                merged++;
            }
            nextLocal = localEnd;
            nextRemote = remoteEnd;
        }
        return new Shape(pieces, merged);
    }

    /**
     * Writes the pairwise local and remote span indices of {@code runs} into the two native int
     * arrays: each run is cut into spans of decreasing powers of two, the same cut on both sides.
     */
    static void fillIndices(
            List<SlotRun> runs,
            BlockGeometry local,
            BlockGeometry remote,
            MemorySegment localOut,
            MemorySegment remoteOut) {
        long next = 0;
        for (SlotRun run : runs) {
            int localBlock = run.localBlock();
            int remoteBlock = run.remoteBlock();
            int left = run.blockCount();
            while (left != 0) {
                int level = 31 - Integer.numberOfLeadingZeros(left);
                localOut.setAtIndex(JAVA_INT, next, local.spanIndex(level, localBlock));
                remoteOut.setAtIndex(JAVA_INT, next, remote.spanIndex(level, remoteBlock));
                next++;
                localBlock += 1 << level;
                remoteBlock += 1 << level;
                left -= 1 << level;
            }
        }
    }

    /** Descriptors once runs contiguous on both sides are merged, as NIXL merges them. */
    static int mergedRuns(List<SlotRun> runs) {
        int merged = 1;
        for (int i = 1; i < runs.size(); i++) {
            SlotRun previous = runs.get(i - 1);
            SlotRun run = runs.get(i);
            boolean continues = previous.localBlock() + previous.blockCount() == run.localBlock()
                    && previous.remoteBlock() + previous.blockCount() == run.remoteBlock();
            if (!continues) {
                merged++;
            }
        }
        return merged;
    }

    private static NixlInvalidParameterException invalid(AgentContext ctx, String why) {
        return new NixlInvalidParameterException(
                "make_xfer_req", ctx.describe(), NixlStatus.INVALID_PARAM, why + " (checked before calling NIXL)");
    }
}
