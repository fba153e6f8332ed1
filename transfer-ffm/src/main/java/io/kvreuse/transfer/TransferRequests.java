package io.kvreuse.transfer;

/**
 * Checks a request against what Java already knows before any native call, so caller mistakes get
 * the same exception whichever NIXL error convention the library follows, and turns slot runs into
 * NIXL's descriptor index arrays.
 */
final class TransferRequests {

    private TransferRequests() {}

    static void validate(AgentContext ctx, TransferRequest request) {
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
        for (SlotRun run : request.runs()) {
            if ((long) run.localBlock() + run.blockCount() > local.blockCount()
                    || (long) run.remoteBlock() + run.blockCount() > remote.blockCount()) {
                throw invalid(
                        ctx,
                        run + " exceeds " + local.blockCount() + " local / " + remote.blockCount() + " remote blocks");
            }
        }
    }

    /** Local and remote descriptor indices, pairwise. */
    static int[][] indices(TransferRequest request) {
        int total = request.blockCount();
        int[] local = new int[total];
        int[] remote = new int[total];
        int next = 0;
        for (SlotRun run : request.runs()) {
            for (int i = 0; i < run.blockCount(); i++, next++) {
                local[next] = run.localBlock() + i;
                remote[next] = run.remoteBlock() + i;
            }
        }
        return new int[][] {local, remote};
    }

    private static NixlInvalidParameterException invalid(AgentContext ctx, String why) {
        return new NixlInvalidParameterException(
                "make_xfer_req", ctx.describe(), NixlStatus.INVALID_PARAM, why + " (checked before calling NIXL)");
    }
}
