package io.kvreuse.settings;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Start-up values of the reuse settings ({@code kvreuse.reuse.*}, e.g. {@code
 * KVREUSE_REUSE_ENABLED=true}). They seed the stored document when none exists; afterwards the
 * stored document wins unless {@code overrideStored} is set.
 *
 * @param enabled enable D→P reuse (default false)
 * @param allowMnnvl allow multi-node NVLink donors (default false)
 * @param minFetchBlocks fewest blocks worth a fetch (default 4)
 * @param maxFetchBlocks most blocks one lease fetches (default 4096)
 * @param maxFetchBytes byte budget of one lease across its ranks (default 8 GiB)
 * @param maxDonorCandidates candidates kept from the index per selection (default 8)
 * @param minGainMs least predicted gain in ms (default 2)
 * @param minGainRatio least predicted gain as a fraction of recompute time (default 0.1)
 * @param leaseTtlMs how long a PROPOSED lease waits for its pins (default 5000)
 * @param transferDeadlineMs how long a transfer may run before it is UNCERTAIN (default 10000)
 * @param abandonDeadlineMs when an unfinished lease is abandoned to operators (default 60000)
 * @param maxInflightPerDonor leases in flight per donor (default 16)
 * @param maxInflightPerTarget leases in flight per target (default 16)
 * @param overrideStored apply these values over the stored document at start-up (default false)
 */
@ConfigurationProperties("kvreuse.reuse")
public record ReuseSettingsProperties(
        @Nullable Boolean enabled,
        @Nullable Boolean allowMnnvl,
        @Nullable Integer minFetchBlocks,
        @Nullable Integer maxFetchBlocks,
        @Nullable Long maxFetchBytes,
        @Nullable Integer maxDonorCandidates,
        @Nullable Double minGainMs,
        @Nullable Double minGainRatio,
        @Nullable Long leaseTtlMs,
        @Nullable Long transferDeadlineMs,
        @Nullable Long abandonDeadlineMs,
        @Nullable Integer maxInflightPerDonor,
        @Nullable Integer maxInflightPerTarget,
        boolean overrideStored) {

    /** The defaults with every configured value applied. */
    ReuseSettings seed() {
        ReuseSettings d = ReuseSettings.defaults();
        return new ReuseSettings(
                or(enabled, d.enabled()),
                or(allowMnnvl, d.allowMnnvl()),
                or(minFetchBlocks, d.minFetchBlocks()),
                or(maxFetchBlocks, d.maxFetchBlocks()),
                or(maxFetchBytes, d.maxFetchBytes()),
                or(maxDonorCandidates, d.maxDonorCandidates()),
                or(minGainMs, d.minGainMs()),
                or(minGainRatio, d.minGainRatio()),
                or(leaseTtlMs, d.leaseTtlMs()),
                or(transferDeadlineMs, d.transferDeadlineMs()),
                or(abandonDeadlineMs, d.abandonDeadlineMs()),
                or(maxInflightPerDonor, d.maxInflightPerDonor()),
                or(maxInflightPerTarget, d.maxInflightPerTarget()));
    }

    private static <T> T or(@Nullable T value, T fallback) {
        return value == null ? fallback : value;
    }
}
