package io.kvreuse.region;

import jakarta.validation.Valid;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.NotEmpty;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Size;
import java.time.Instant;
import java.util.List;
import java.util.UUID;

/** Bodies of {@code /api/v1/incarnations/{id}/destination-regions}. */
final class DestinationRegionRequests {

    private DestinationRegionRequests() {}

    /** Regions to register, at the incarnation's current epoch. */
    record DestinationRegionRegistration(
            @NotNull @Min(1) Long fencingEpoch,
            @NotEmpty @Size(max = 256) List<@NotNull @Valid DestinationRegion> regions) {}

    /** One rank's region: where a transfer may write, and how many blocks it holds. */
    record DestinationRegion(
            @NotNull @Min(0) @Max(63) Integer rank,
            @NotBlank @Size(max = 500) @RegionReference String regionRef,
            @NotNull @Min(1) @Max(100_000_000) Integer capacityBlocks) {}

    /** Every region the incarnation registered. */
    record DestinationRegionList(UUID incarnationId, List<RegisteredDestinationRegion> regions) {}

    record RegisteredDestinationRegion(int rank, String regionRef, int capacityBlocks, Instant registeredAt) {}
}
