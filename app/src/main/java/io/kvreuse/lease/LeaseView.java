package io.kvreuse.lease;

import io.kvreuse.domain.TransportClass;
import io.swagger.v3.oas.annotations.media.Schema;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.UUID;
import org.jspecify.annotations.Nullable;

/** A lease as shown by the API: its state and outcome, its parties and epochs, and what it holds per rank. */
@Schema(description = "A lease: its state and outcome, its parties and epochs, and what it holds per rank")
public record LeaseView(
        @Schema(description = "The lease") UUID leaseId,

        @Schema(description = "The router's id of the serving request")
        String requestId,

        @Schema(description = "PROPOSED, PINNED, ALLOCATED, TRANSFERRING, DELIVERED, COMMITTED, ABORTED, … (DESIGN §5)")
        LeaseState state,

        @Schema(description = "How it ended, once it has") @Nullable
        LeaseOutcome outcome,

        @Schema(description = "Why it ended that way, in words") @Nullable
        String reason,

        @Schema(description = "The layout domain") String domainId,
        @Schema(description = "The donor incarnation") UUID donorIncarnationId,

        @Schema(description = "The donor's fencing epoch the lease was made under")
        long donorEpoch,

        @Schema(description = "The retained bank") UUID bankId,

        @Schema(description = "The bank's epoch (bumped by every reset)")
        long bankEpoch,

        @Schema(description = "The target incarnation") UUID targetIncarnationId,

        @Schema(description = "The target's fencing epoch the lease was made under")
        long targetEpoch,

        @Schema(description = "Blocks the target already holds")
        int localPrefixBlocks,

        @Schema(description = "Blocks the lease fetches") int fetchBlocks,

        @Schema(description = "Hashes of the fetched blocks, u64 as decimal strings")
        List<String> seqHashes,

        @Schema(description = "Where the blocks are in the donor's bank: slot runs [start, count]")
        List<List<Integer>> sourceSlotRuns,

        @Schema(description = "GPU_CUDA_IPC (same host), GPU_MNNVL (multi-node NVLink) or CPU_TP1")
        TransportClass transportClass,

        @Schema(description = "Transfer time predicted at selection, milliseconds")
        double predictedTransferMs,

        @Schema(description = "Recompute time predicted at selection, milliseconds")
        double predictedRecomputeMs,

        @Schema(description = "Blocks the target verified and committed") @Nullable
        Integer committedBlocks,

        @Schema(description = "Proven that the transfer can no longer read donor memory")
        boolean sourceQuiesced,

        @Schema(description = "Proven that the transfer can no longer write target memory")
        boolean destinationQuiesced,

        @Schema(description = "When it was created") Instant createdAt,

        @Schema(description = "Until when a PROPOSED lease waits for its destination")
        Instant ttlDeadline,

        @Schema(description = "When the transfer must be done")
        Instant transferDeadline,

        @Schema(description = "When an unfinished lease is given up")
        Instant abandonDeadline,

        @Schema(description = "When the state last changed") Instant stateChangedAt,

        @Schema(description = "Row version, bumped by every change")
        long version,

        @Schema(description = "The donor's pins, one per rank")
        List<Pin> pins,

        @Schema(description = "The target's destination allocations, one per rank")
        List<Destination> destinations) {

    /** One rank's source pin: {@code HELD}, {@code RELEASING} or {@code RELEASED}. */
    @Schema(name = "LeasePin", description = "One rank's source pin")
    public record Pin(
            @Schema(description = "Tensor-parallel rank") int rank,

            @Schema(description = "HELD, RELEASING or RELEASED")
            String state,

            @Schema(description = "Blocks pinned") int blocks) {}

    /** One rank's destination allocation. */
    @Schema(name = "LeaseDestination", description = "One rank's destination allocation")
    public record Destination(
            @Schema(description = "Tensor-parallel rank") int rank,

            @Schema(
                    description =
                            "The engine's memory region: shm://<name> (emulation) or cuda-ipc://<gpuOrdinal>/<handle>?size=<bytes>")
            String regionRef,

            @Schema(description = "Destination slot runs [start, count]")
            List<List<Integer>> slots,

            @Schema(description = "The allocation's state") String state) {}

    /** The lease as read, or as a decision left it: what reading it back once the decision is written answers. */
    static LeaseView of(LeaseAggregate lease) {
        LeaseRow r = lease.row();
        return new LeaseView(
                r.leaseId(),
                r.requestId(),
                r.state(),
                r.outcome(),
                r.reason(),
                r.domainId(),
                r.donorId(),
                r.donorEpoch(),
                r.bankId(),
                r.bankEpoch(),
                r.targetId(),
                r.targetEpoch(),
                r.localPrefixBlocks(),
                r.fetchBlocks(),
                r.hashes(),
                SlotRuns.list(r.sourceRuns()),
                r.transportClass(),
                r.predictedTransferMs(),
                r.predictedRecomputeMs(),
                r.committedBlocks(),
                r.sourceQuiesced(),
                r.destinationQuiesced(),
                r.createdAt(),
                r.ttlDeadline(),
                r.transferDeadline(),
                r.abandonDeadline(),
                r.stateChangedAt(),
                r.version(),
                pins(lease),
                destinations(lease));
    }

    private static List<Pin> pins(LeaseAggregate lease) {
        return lease.pins().stream()
                .sorted(Comparator.comparingInt(LeaseAggregate.Pin::rank))
                .map(p -> new Pin(p.rank(), p.state().name(), lease.row().fetchBlocks()))
                .toList();
    }

    private static List<Destination> destinations(LeaseAggregate lease) {
        return lease.destinations().stream()
                .sorted(Comparator.comparingInt(LeaseAggregate.Destination::rank))
                .map(d -> new Destination(
                        d.rank(),
                        d.regionRef(),
                        SlotRuns.list(d.runs()),
                        d.state().name()))
                .toList();
    }
}
