package io.kvreuse.settings;

import io.swagger.v3.oas.annotations.media.Schema;
import java.time.Instant;
import org.jspecify.annotations.Nullable;

/**
 * The reuse-settings document as the served OpenAPI document describes it; {@link SettingsDocument}
 * reads and writes it field by field (unknown fields and wrong types are refused).
 */
@Schema(
        name = "ReuseSettings",
        description = "The reuse settings (DESIGN §3): one versioned document, effective at once on every replica. "
                + "What GET returns can be PUT back; updatedAt and updatedBy are ignored on PUT.",
        additionalProperties = Schema.AdditionalPropertiesValue.FALSE)
record SettingsSchema(
        @Schema(
                description = "Reuse on (true) or off (false); off answers every selection NO_HINT DISABLED",
                requiredMode = Schema.RequiredMode.REQUIRED)
        boolean enabled,

        @Schema(
                description = "Allow donors over multi-node NVLink (GPU_MNNVL domains)",
                requiredMode = Schema.RequiredMode.REQUIRED)
        boolean allowMnnvl,

        @Schema(
                description = "Fewest blocks worth a fetch",
                minimum = "1",
                maximum = "1000000",
                requiredMode = Schema.RequiredMode.REQUIRED)
        int minFetchBlocks,

        @Schema(
                description = "Most blocks one lease fetches",
                minimum = "1",
                maximum = "1000000",
                requiredMode = Schema.RequiredMode.REQUIRED)
        int maxFetchBlocks,

        @Schema(
                description = "Byte budget of one lease, divided across its ranks",
                minimum = "1",
                requiredMode = Schema.RequiredMode.REQUIRED)
        long maxFetchBytes,

        @Schema(
                description = "Most donor banks one selection considers",
                minimum = "1",
                maximum = "256",
                requiredMode = Schema.RequiredMode.REQUIRED)
        int maxDonorCandidates,

        @Schema(
                description = "Least predicted gain of a hint, in milliseconds",
                requiredMode = Schema.RequiredMode.REQUIRED)
        double minGainMs,

        @Schema(
                description = "Least predicted gain of a hint as a fraction of the recompute time",
                requiredMode = Schema.RequiredMode.REQUIRED)
        double minGainRatio,

        @Schema(
                description = "How long a PROPOSED lease waits for the target's destination, in milliseconds",
                requiredMode = Schema.RequiredMode.REQUIRED)
        long leaseTtlMs,

        @Schema(
                description =
                        "How long the transfer may take from the proposal, in milliseconds (below abandonDeadlineMs)",
                requiredMode = Schema.RequiredMode.REQUIRED)
        long transferDeadlineMs,

        @Schema(
                description = "When an unfinished lease is given up, in milliseconds from the proposal",
                requiredMode = Schema.RequiredMode.REQUIRED)
        long abandonDeadlineMs,

        @Schema(
                description = "Most live leases per donor incarnation",
                minimum = "1",
                maximum = "100000",
                requiredMode = Schema.RequiredMode.REQUIRED)
        int maxInflightPerDonor,

        @Schema(
                description = "Most live leases per target incarnation",
                minimum = "1",
                maximum = "100000",
                requiredMode = Schema.RequiredMode.REQUIRED)
        int maxInflightPerTarget,

        @Schema(
                description =
                        "Version of the stored document; a PUT with another version than the current one is a 409")
        @Nullable
        Long version,

        @Schema(
                description = "When the document was last changed (read only)",
                accessMode = Schema.AccessMode.READ_ONLY)
        @Nullable
        Instant updatedAt,

        @Schema(
                description = "Who last changed it: a token subject or system (read only)",
                accessMode = Schema.AccessMode.READ_ONLY)
        @Nullable
        String updatedBy) {}
