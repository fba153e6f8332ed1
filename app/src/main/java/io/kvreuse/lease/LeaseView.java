package io.kvreuse.lease;

import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import org.jspecify.annotations.Nullable;

/** A lease as shown by the API: its state and outcome, its parties and epochs, and what it holds per rank. */
public record LeaseView(
        UUID leaseId,
        String requestId,
        LeaseState state,
        @Nullable String outcome,
        @Nullable String reason,
        String domainId,
        UUID donorIncarnationId,
        long donorEpoch,
        UUID bankId,
        long bankEpoch,
        UUID targetIncarnationId,
        long targetEpoch,
        int localPrefixBlocks,
        int fetchBlocks,
        List<String> seqHashes,
        List<List<Integer>> sourceSlotRuns,
        String transportClass,
        double predictedTransferMs,
        double predictedRecomputeMs,
        @Nullable Integer committedBlocks,
        boolean sourceQuiesced,
        boolean destinationQuiesced,
        Instant createdAt,
        Instant ttlDeadline,
        Instant transferDeadline,
        Instant abandonDeadline,
        Instant stateChangedAt,
        long version,
        List<Pin> pins,
        List<Destination> destinations) {

    /** One rank's source pin: {@code HELD}, {@code RELEASING} or {@code RELEASED}. */
    public record Pin(int rank, String state, int blocks) {}

    /** One rank's destination allocation. */
    public record Destination(int rank, String regionRef, List<List<Integer>> slots, String state) {}

    static LeaseView of(LeaseRow r, List<HoldStore.Pin> pins, List<HoldStore.Destination> dests) {
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
                Arrays.stream(r.seqHashes()).mapToObj(Long::toUnsignedString).toList(),
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
                pins.stream().map(p -> new Pin(p.rank(), p.state(), p.blocks())).toList(),
                dests.stream()
                        .map(d -> new Destination(d.rank(), d.regionRef(), SlotRuns.list(d.runs()), d.state()))
                        .toList());
    }
}
