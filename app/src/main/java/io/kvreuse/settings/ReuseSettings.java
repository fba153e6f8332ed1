package io.kvreuse.settings;

import java.util.ArrayList;
import java.util.List;

/**
 * The reuse settings of DESIGN §3. Durations are milliseconds; {@code maxFetchBytes} is the
 * budget of one lease, divided across its ranks.
 */
public record ReuseSettings(
        boolean enabled,
        boolean allowMnnvl,
        int minFetchBlocks,
        int maxFetchBlocks,
        long maxFetchBytes,
        int maxDonorCandidates,
        double minGainMs,
        double minGainRatio,
        long leaseTtlMs,
        long transferDeadlineMs,
        long abandonDeadlineMs,
        int maxInflightPerDonor,
        int maxInflightPerTarget) {

    /** The defaults: reuse is experimental and off until an operator enables it. */
    public static ReuseSettings defaults() {
        return new ReuseSettings(false, false, 4, 4096, 8L << 30, 8, 2.0, 0.1, 5_000, 10_000, 60_000, 16, 16);
    }

    /** Every broken rule, as "field: message"; empty when valid. */
    public List<String> violations() {
        List<String> v = new ArrayList<>();
        range(v, "minFetchBlocks", minFetchBlocks, 1, 1_000_000);
        range(v, "maxFetchBlocks", maxFetchBlocks, 1, 1_000_000);
        range(v, "maxFetchBytes", maxFetchBytes, 1, 1L << 40);
        range(v, "maxDonorCandidates", maxDonorCandidates, 1, 256);
        range(v, "minGainMs", minGainMs, 0, 600_000);
        range(v, "minGainRatio", minGainRatio, 0, 1);
        range(v, "leaseTtlMs", leaseTtlMs, 100, 600_000);
        range(v, "transferDeadlineMs", transferDeadlineMs, 100, 3_600_000);
        range(v, "abandonDeadlineMs", abandonDeadlineMs, 1_000, 86_400_000);
        range(v, "maxInflightPerDonor", maxInflightPerDonor, 1, 100_000);
        range(v, "maxInflightPerTarget", maxInflightPerTarget, 1, 100_000);
        if (minFetchBlocks > maxFetchBlocks) {
            v.add("minFetchBlocks: must not exceed maxFetchBlocks");
        }
        if (transferDeadlineMs >= abandonDeadlineMs) {
            v.add("abandonDeadlineMs: must be greater than transferDeadlineMs");
        }
        return v;
    }

    private static void range(List<String> v, String field, double value, double min, double max) {
        if (!(value >= min && value <= max)) {
            v.add(field + ": must be between " + fmt(min) + " and " + fmt(max));
        }
    }

    private static String fmt(double d) {
        return d == Math.rint(d) ? Long.toString((long) d) : Double.toString(d);
    }
}
