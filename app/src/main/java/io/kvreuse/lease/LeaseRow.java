package io.kvreuse.lease;

import io.kvreuse.bank.BlockPins;
import io.kvreuse.domain.TransportClass;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import org.jspecify.annotations.Nullable;

/** A lease row as stored (read under its row lock when it is about to change). */
record LeaseRow(
        UUID leaseId,
        String requestId,
        LeaseState state,
        @Nullable LeaseOutcome outcome,
        @Nullable String reason,
        String domainId,
        UUID donorId,
        long donorEpoch,
        UUID bankId,
        long bankEpoch,
        UUID targetId,
        long targetEpoch,
        int localPrefixBlocks,
        int fetchBlocks,
        long[] seqHashes,
        int[][] sourceRuns,
        TransportClass transportClass,
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
        long version) {

    /**
     * Lease {@code l} as the JSON object a {@code LeaseRow} decodes from (V97); times as epoch seconds to
     * the microsecond (PostgreSQL's resolution), which decode exactly and much faster than timestamp text.
     */
    static final String JSON = "kvreuse_lease_row_json(l)";

    /** The same lease after a move to {@code to}. */
    LeaseRow moved(LeaseState to, @Nullable LeaseOutcome newOutcome, @Nullable String newReason, Instant now) {
        return with(
                to,
                newOutcome == null ? outcome : newOutcome,
                newReason == null ? reason : newReason,
                committedBlocks,
                sourceQuiesced,
                destinationQuiesced,
                now,
                version + 1);
    }

    /** The same lease with what a report records without a move: the committed blocks and quiescence. */
    LeaseRow reported(@Nullable Integer blocks, boolean source, boolean destination) {
        return with(state, outcome, reason, blocks, source, destination, stateChangedAt, version);
    }

    /** The same lease with what its changes touch replaced; everything it was made with kept. */
    private LeaseRow with(
            LeaseState newState,
            @Nullable LeaseOutcome newOutcome,
            @Nullable String newReason,
            @Nullable Integer newCommittedBlocks,
            boolean newSourceQuiesced,
            boolean newDestinationQuiesced,
            Instant newStateChangedAt,
            long newVersion) {
        return new LeaseRow(
                leaseId,
                requestId,
                newState,
                newOutcome,
                newReason,
                domainId,
                donorId,
                donorEpoch,
                bankId,
                bankEpoch,
                targetId,
                targetEpoch,
                localPrefixBlocks,
                fetchBlocks,
                seqHashes,
                sourceRuns,
                transportClass,
                predictedTransferMs,
                predictedRecomputeMs,
                newCommittedBlocks,
                newSourceQuiesced,
                newDestinationQuiesced,
                createdAt,
                ttlDeadline,
                transferDeadline,
                abandonDeadline,
                newStateChangedAt,
                newVersion);
    }

    /** How statements bind a time. */
    static OffsetDateTime at(Instant t) {
        return t.atOffset(ZoneOffset.UTC);
    }

    /** The fetched blocks' hashes as the API shows them: u64 as decimal strings. */
    List<String> hashes() {
        return Arrays.stream(seqHashes).mapToObj(Long::toUnsignedString).toList();
    }

    /** The lease's blocks on one rank of the donor's bank, each at its slot, numbered {@code item}. */
    List<BlockPins.Block> blocks(int item, int rank) {
        int[] slots = SlotRuns.expand(sourceRuns, fetchBlocks);
        List<BlockPins.Block> blocks = new ArrayList<>();
        for (int i = 0; i < seqHashes.length; i++) {
            blocks.add(new BlockPins.Block(item, bankId, rank, seqHashes[i], slots[i]));
        }
        return blocks;
    }
}
