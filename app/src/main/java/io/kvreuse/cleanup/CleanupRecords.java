package io.kvreuse.cleanup;

import java.time.Instant;
import java.util.List;
import java.util.UUID;
import org.jspecify.annotations.Nullable;

/** The public records of cleanup, as the REST API and the admin UI show them. */
public final class CleanupRecords {

    private CleanupRecords() {}

    /** An incarnation an operator may clean up, and why it is listed. */
    public record Candidate(
            UUID incarnationId,
            @Nullable String stableName,
            String state,
            String role,
            String hostId,
            Instant stateChangedAt,
            int unfinishedLeases,
            int liveBanks,
            String why) {}

    /**
     * A dry run: everything execution would release, and what blocks it. {@code blockers} lists
     * transfers not proven quiesced; when it is not empty execution needs {@code quiescenceAttested}.
     */
    public record Plan(
            UUID planId,
            UUID incarnationId,
            @Nullable String stableName,
            String incarnationState,
            long fencingEpoch,
            String status,
            List<PlannedLease> leases,
            List<PlannedBank> banks,
            long pinnedBlocks,
            long destinationBlocks,
            List<String> blockers,
            boolean attestationRequired,
            String fingerprint,
            Instant createdAt,
            String createdBy,
            @Nullable Outcome outcome) {}

    /** One unfinished lease: which side the incarnation is, what it holds, whether its transfer is proven quiet. */
    public record PlannedLease(
            UUID leaseId,
            String state,
            String side,
            int pinnedRanks,
            long pinnedBlocks,
            int destinationRanks,
            long destinationBlocks,
            boolean quiescenceProven) {}

    public record PlannedBank(UUID bankId, String state, long bankEpoch, long blocks, long pinnedBlocks) {}

    /** What an execution did. */
    public record Outcome(
            UUID planId,
            UUID incarnationId,
            String previousState,
            String state,
            long fencingEpoch,
            int leasesEnded,
            long pinsReleased,
            long destinationsReleased,
            long banksDropped,
            String reason,
            boolean quiescenceAttested,
            String executedBy,
            Instant executedAt) {}
}
