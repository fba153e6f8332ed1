package io.kvreuse.domain;

/**
 * Profitability model of a layout domain (DESIGN §4 step 4). Recompute time of the fetched range
 * is a prefill cost per token plus an attention term growing with the context already present;
 * transfer time is a fixed setup plus the bytes of one rank over the transport's bandwidth
 * (ranks move in parallel).
 *
 * @param prefillMsPerToken prefill cost per token, linear part
 * @param prefillMsPerTokenSq attention part: cost per token per 1,000 tokens of context before it
 * @param transferSetupMs fixed cost of one transfer (descriptor prep, posting, completion)
 * @param transferGbytesPerS sustained bandwidth of one rank's transfer, GB/s
 */
public record CostModel(
        double prefillMsPerToken, double prefillMsPerTokenSq, double transferSetupMs, double transferGbytesPerS) {

    /** Conservative defaults per transport, until an operator sets or calibration measures better ones. */
    public static CostModel defaults(TransportClass transportClass) {
        return switch (transportClass) {
            case GPU_CUDA_IPC -> new CostModel(0.05, 0.01, 1.0, 100.0);
            case GPU_MNNVL -> new CostModel(0.05, 0.01, 2.0, 50.0);
            case CPU_TP1 -> new CostModel(0.05, 0.01, 5.0, 5.0);
        };
    }

    /** Milliseconds to prefill {@code blocks} blocks that start {@code contextBlocks} blocks from the root. */
    public double recomputeMs(int contextBlocks, int blocks, int blockSizeTokens) {
        double tokens = (double) blocks * blockSizeTokens;
        double meanContext = (contextBlocks + blocks / 2.0) * blockSizeTokens;
        return tokens * (prefillMsPerToken + prefillMsPerTokenSq * meanContext / 1000.0);
    }

    /** Milliseconds to move {@code bytesPerRank} on every rank in parallel. */
    public double transferMs(long bytesPerRank) {
        return transferSetupMs + bytesPerRank / (transferGbytesPerS * 1e6);
    }
}
