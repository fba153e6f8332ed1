package io.kvreuse.lease;

import io.r2dbc.postgresql.codec.Json;
import io.r2dbc.spi.Readable;
import java.time.Instant;
import java.util.UUID;
import org.jspecify.annotations.Nullable;

/** A lease row as stored (read under its row lock when it is about to change). */
record LeaseRow(
        UUID leaseId,
        String requestId,
        LeaseState state,
        @Nullable String outcome,
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
        long version) {

    /**
     * The columns {@link #of} reads, for a query that names the lease table {@code l}. Timestamps come
     * as epoch microseconds: decoding them from text costs more than all the other columns together.
     */
    static final String COLUMNS = """
            l.lease_id, l.request_id, l.state, l.outcome, l.reason, l.domain_id, l.donor_incarnation_id, l.donor_epoch,
            l.bank_id, l.bank_epoch, l.target_incarnation_id, l.target_epoch, l.local_prefix_blocks, l.fetch_blocks,
            l.seq_hashes, l.source_slot_runs, l.transport_class, l.predicted_transfer_ms, l.predicted_recompute_ms,
            l.committed_blocks, l.source_quiesced, l.destination_quiesced, l.version,
            CAST(EXTRACT(EPOCH FROM l.created_at) * 1000000 AS BIGINT) AS created_at,
            CAST(EXTRACT(EPOCH FROM l.ttl_deadline) * 1000000 AS BIGINT) AS ttl_deadline,
            CAST(EXTRACT(EPOCH FROM l.transfer_deadline) * 1000000 AS BIGINT) AS transfer_deadline,
            CAST(EXTRACT(EPOCH FROM l.abandon_deadline) * 1000000 AS BIGINT) AS abandon_deadline,
            CAST(EXTRACT(EPOCH FROM l.state_changed_at) * 1000000 AS BIGINT) AS state_changed_at""";

    static LeaseRow of(Readable r) {
        Long[] hashes = r.get("seq_hashes", Long[].class);
        long[] h = new long[hashes == null ? 0 : hashes.length];
        for (int i = 0; i < h.length; i++) {
            h[i] = hashes[i];
        }
        Json runs = r.get("source_slot_runs", Json.class);
        return new LeaseRow(
                r.get("lease_id", UUID.class),
                r.get("request_id", String.class),
                LeaseState.valueOf(r.get("state", String.class)),
                r.get("outcome", String.class),
                r.get("reason", String.class),
                r.get("domain_id", String.class),
                r.get("donor_incarnation_id", UUID.class),
                r.get("donor_epoch", Long.class),
                r.get("bank_id", UUID.class),
                r.get("bank_epoch", Long.class),
                r.get("target_incarnation_id", UUID.class),
                r.get("target_epoch", Long.class),
                r.get("local_prefix_blocks", Integer.class),
                r.get("fetch_blocks", Integer.class),
                h,
                runs == null ? new int[0][] : SlotRuns.parse(runs.asString()),
                r.get("transport_class", String.class),
                r.get("predicted_transfer_ms", Double.class),
                r.get("predicted_recompute_ms", Double.class),
                r.get("committed_blocks", Integer.class),
                Boolean.TRUE.equals(r.get("source_quiesced", Boolean.class)),
                Boolean.TRUE.equals(r.get("destination_quiesced", Boolean.class)),
                at(r, "created_at"),
                at(r, "ttl_deadline"),
                at(r, "transfer_deadline"),
                at(r, "abandon_deadline"),
                at(r, "state_changed_at"),
                r.get("version", Long.class));
    }

    private static Instant at(Readable r, String column) {
        long us = r.get(column, Long.class);
        return Instant.ofEpochSecond(Math.floorDiv(us, 1_000_000L), Math.floorMod(us, 1_000_000L) * 1000L);
    }

    /** The same lease after a move to {@code to}. */
    LeaseRow moved(LeaseState to, @Nullable String newOutcome, @Nullable String newReason, Instant now) {
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
            @Nullable String newOutcome,
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

    /** The source slot of every fetched block, in order. */
    int[] sourceSlots() {
        return SlotRuns.expand(sourceRuns, fetchBlocks);
    }
}
