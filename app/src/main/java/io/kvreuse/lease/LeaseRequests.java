package io.kvreuse.lease;

import io.kvreuse.protocol.RegionReference;
import io.swagger.v3.oas.annotations.media.Schema;
import jakarta.validation.Valid;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.NotEmpty;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Size;
import java.util.List;
import java.util.UUID;
import org.jspecify.annotations.Nullable;

/** Request bodies of the lease and command endpoints. Every report carries the reporter's fencing epoch. */
final class LeaseRequests {

    private LeaseRequests() {}

    static final String EPOCH =
            "The reporter's current fencing epoch; any other value is refused as a stale fencing epoch (409)";

    @Schema(description = "The target's destination allocation for one lease")
    record DestinationRequest(
            @Schema(description = EPOCH) @NotNull @Min(1) Long fencingEpoch,

            @Schema(description = "Per rank, the destination region and slot runs") @NotEmpty @Size(max = 64)
            List<@NotNull @Valid RankDestination> ranks) {}

    @Schema(description = "One rank's destination: a registered region and the slots the blocks go to")
    record RankDestination(
            @Schema(description = "Tensor-parallel rank") @NotNull @Min(0)
            Integer rank,

            @Schema(
                    description =
                            "The engine's memory region: shm://<name> (emulation) or cuda-ipc://<gpuOrdinal>/<handle>?size=<bytes>")
            @NotBlank
            @Size(max = 500)
            @RegionReference
            String regionRef,

            @Schema(description = "Destination slot runs [start, count], in block order") @NotEmpty @Size(max = 4096)
            List<@NotNull @Size(min = 2, max = 2) List<@NotNull Integer>> slots) {}

    @Schema(description = "The target verified the delivered blocks and uses them")
    record CommitRequest(
            @Schema(description = EPOCH) @NotNull @Min(1) Long fencingEpoch,

            @Schema(description = "Blocks the target verified and committed") @NotNull @Min(1)
            Integer committedBlocks) {}

    @Schema(description = "The target gives the lease up; operators may force an abort without an epoch")
    record AbortRequest(
            @Schema(description = "The reporter's current fencing epoch (operators may omit it)") @Nullable @Min(1)
            Long fencingEpoch,

            @Schema(description = "Why, in words (recorded on the lease and in the audit trail)")
            @Nullable
            @Size(max = 1000)
            String reason) {}

    enum Side {
        SOURCE,
        DESTINATION
    }

    @Schema(description = "Evidence that one side of the transfer can no longer be touched by it")
    record QuiescedRequest(
            @Schema(description = "SOURCE (donor memory) or DESTINATION (target memory)") @NotNull
            Side side,

            @Schema(description = "What proves it, in words (e.g. the NIXL request was released)")
            @NotBlank
            @Size(max = 2000)
            String evidence,

            @Schema(description = "The reporter's current fencing epoch (operators may omit it)") @Nullable @Min(1)
            Long fencingEpoch) {}

    @Schema(description = "An engine's acknowledgement of one command")
    record AckRequest(
            @Schema(description = "true when the engine did what the command asked") @NotNull
            Boolean ok,

            @Schema(description = EPOCH) @NotNull @Min(1) Long fencingEpoch,

            @Schema(description = "Why the engine refused, when ok is false") @Nullable @Size(max = 2000)
            String detail) {}

    @Schema(description = "Acknowledgements of many commands of one incarnation")
    record AcksRequest(
            @Schema(description = EPOCH) @NotNull @Min(1) Long fencingEpoch,

            @Schema(description = "The acknowledgements (1–256)") @NotEmpty @Size(max = 256)
            List<@NotNull @Valid AckEntry> acks) {}

    @Schema(description = "One acknowledgement of a batch")
    record AckEntry(
            @Schema(description = "The engine command") @NotNull
            UUID commandId,

            @Schema(description = "true when the engine did what the command asked") @NotNull
            Boolean ok,

            @Schema(description = "Why the engine refused, when ok is false") @Nullable @Size(max = 2000)
            String detail) {}

    @Schema(description = "Destination allocations of many leases of one target")
    record DestinationsRequest(
            @Schema(description = EPOCH) @NotNull @Min(1) Long fencingEpoch,

            @Schema(description = "The allocations (1–256)") @NotEmpty @Size(max = 256)
            List<@NotNull @Valid DestinationEntry> destinations) {}

    @Schema(description = "One lease's destination allocation in a batch")
    record DestinationEntry(
            @Schema(description = "The lease") @NotNull UUID leaseId,

            @Schema(description = "Per rank, the destination region and slot runs") @NotEmpty @Size(max = 64)
            List<@NotNull @Valid RankDestination> ranks) {}

    @Schema(description = "Commits of many leases of one target")
    record CommitsRequest(
            @Schema(description = EPOCH) @NotNull @Min(1) Long fencingEpoch,

            @Schema(description = "The commits (1–256)") @NotEmpty @Size(max = 256)
            List<@NotNull @Valid CommitEntry> commits) {}

    @Schema(description = "One lease's commit in a batch")
    record CommitEntry(
            @Schema(description = "The lease") @NotNull UUID leaseId,

            @Schema(description = "Blocks the target verified and committed") @NotNull @Min(1)
            Integer committedBlocks) {}
}
