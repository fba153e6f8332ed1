package io.kvreuse.region;

import io.kvreuse.protocol.RegionReference;
import io.swagger.v3.oas.annotations.media.Schema;
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
    @Schema(description = "A target's destination regions, replacing those registered before")
    record DestinationRegionRegistration(
            @Schema(
                    description =
                            "The reporter's current fencing epoch; any other value is refused as a stale fencing epoch (409)")
            @NotNull
            @Min(1)
            Long fencingEpoch,

            @Schema(description = "The regions (1–256)") @NotEmpty @Size(max = 256)
            List<@NotNull @Valid DestinationRegion> regions) {}

    /** One rank's region: where a transfer may write, and how many blocks it holds. */
    @Schema(name = "DestinationRegionRequest", description = "One destination region of a rank")
    record DestinationRegion(
            @Schema(description = "Tensor-parallel rank") @NotNull @Min(0) @Max(63)
            Integer rank,

            @Schema(
                    description =
                            "The engine's memory region: shm://<name> (emulation) or cuda-ipc://<gpuOrdinal>/<handle>?size=<bytes>")
            @NotBlank
            @Size(max = 500)
            @RegionReference
            String regionRef,

            @Schema(description = "Blocks the region holds (1–100,000,000)") @NotNull @Min(1) @Max(100_000_000)
            Integer capacityBlocks) {}

    /** Every region the incarnation registered. */
    @Schema(description = "A target's registered destination regions")
    record DestinationRegionList(
            @Schema(description = "The engine incarnation") UUID incarnationId,
            @Schema(description = "The regions, by rank") List<RegisteredDestinationRegion> regions) {}

    @Schema(name = "DestinationRegion", description = "A registered destination region")
    record RegisteredDestinationRegion(
            @Schema(description = "Tensor-parallel rank") int rank,

            @Schema(
                    description =
                            "The engine's memory region: shm://<name> (emulation) or cuda-ipc://<gpuOrdinal>/<handle>?size=<bytes>")
            String regionRef,

            @Schema(description = "Capacity in blocks") int capacityBlocks,
            @Schema(description = "When it registered") Instant registeredAt) {}
}
