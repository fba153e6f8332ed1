package io.kvreuse.lease;

import jakarta.validation.Valid;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.NotEmpty;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Size;
import java.util.List;
import org.jspecify.annotations.Nullable;

/** Request bodies of the lease and command endpoints. Every report carries the reporter's fencing epoch. */
final class LeaseRequests {

    private LeaseRequests() {}

    /** The target's destination allocation: per rank, its region and slot runs {@code [[start, count], …]}. */
    record DestinationRequest(
            @NotNull @Min(1) Long fencingEpoch,
            @NotEmpty @Size(max = 64) List<@NotNull @Valid RankDestination> ranks) {}

    record RankDestination(
            @NotNull @Min(0) Integer rank,

            @NotBlank @Size(max = 500) @io.kvreuse.region.RegionReference
            String regionRef,

            @NotEmpty @Size(max = 4096) List<@NotNull @Size(min = 2, max = 2) List<@NotNull Integer>> slots) {}

    record CommitRequest(
            @NotNull @Min(1) Long fencingEpoch,
            @NotNull @Min(1) Integer committedBlocks) {}

    /** An abort; operators may force one without an epoch. */
    record AbortRequest(
            @Nullable @Min(1) Long fencingEpoch,
            @Nullable @Size(max = 1000) String reason) {}

    enum Side {
        SOURCE,
        DESTINATION
    }

    /** Evidence that one side of the transfer can no longer be touched by it (operators may attest without an epoch). */
    record QuiescedRequest(
            @NotNull Side side,
            @NotBlank @Size(max = 2000) String evidence,
            @Nullable @Min(1) Long fencingEpoch) {}

    record AckRequest(
            @NotNull Boolean ok,
            @NotNull @Min(1) Long fencingEpoch,
            @Nullable @Size(max = 2000) String detail) {}

    /** Acknowledgements of many commands of one incarnation, at its current epoch. */
    record AcksRequest(
            @NotNull @Min(1) Long fencingEpoch,
            @NotEmpty @Size(max = 256) List<@NotNull @Valid AckEntry> acks) {}

    record AckEntry(
            @NotNull java.util.UUID commandId,
            @NotNull Boolean ok,
            @Nullable @Size(max = 2000) String detail) {}

    /** Destination allocations of many leases of one target incarnation. */
    record DestinationsRequest(
            @NotNull @Min(1) Long fencingEpoch,
            @NotEmpty @Size(max = 256) List<@NotNull @Valid DestinationEntry> destinations) {}

    record DestinationEntry(
            @NotNull java.util.UUID leaseId,
            @NotEmpty @Size(max = 64) List<@NotNull @Valid RankDestination> ranks) {}

    /** Commits of many leases of one target incarnation. */
    record CommitsRequest(
            @NotNull @Min(1) Long fencingEpoch,
            @NotEmpty @Size(max = 256) List<@NotNull @Valid CommitEntry> commits) {}

    record CommitEntry(
            @NotNull java.util.UUID leaseId,
            @NotNull @Min(1) Integer committedBlocks) {}
}
