package io.kvreuse.cleanup;

import io.swagger.v3.oas.annotations.media.Schema;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import org.jspecify.annotations.Nullable;

/** The public records of cleanup, as the REST API and the admin UI show them. */
public final class CleanupRecords {

    private CleanupRecords() {}

    /** An incarnation an operator may clean up, and why it is listed. */
    @Schema(
            name = "CleanupCandidate",
            description = "An incarnation an operator may clean up (SUSPECT or LOST, or holding resources)")
    public record Candidate(
            @Schema(description = "The engine incarnation") UUID incarnationId,

            @Schema(description = "A stable, human-readable engine name (DNS style), kept across incarnations")
            @Nullable
            String stableName,

            @Schema(description = "The incarnation's state") String state,
            @Schema(description = "PREFILL or DECODE") String role,

            @Schema(description = "The GPU host, as engines and its node agent name it")
            String hostId,

            @Schema(description = "When the state last changed")
            Instant stateChangedAt,

            @Schema(description = "Leases not yet final") int unfinishedLeases,
            @Schema(description = "Banks not dropped") int liveBanks,
            @Schema(description = "Why it is a candidate") String why) {}

    /**
     * A dry run: everything execution would release, and what blocks it. {@code blockers} lists
     * transfers not proven quiesced; when it is not empty execution needs {@code quiescenceAttested}.
     */
    @Schema(
            name = "CleanupPlan",
            description = "A dry-run cleanup plan: everything execution would release and what blocks it")
    public record Plan(
            @Schema(description = "The cleanup plan") UUID planId,
            @Schema(description = "The engine incarnation") UUID incarnationId,

            @Schema(description = "A stable, human-readable engine name (DNS style), kept across incarnations")
            @Nullable
            String stableName,

            @Schema(description = "The incarnation's state when planned")
            String incarnationState,

            @Schema(description = "The incarnation's epoch when planned")
            long fencingEpoch,

            @Schema(description = "PLANNED, EXECUTED or STALE")
            String status,

            @Schema(description = "The leases it would end") List<PlannedLease> leases,
            @Schema(description = "The banks it would drop") List<PlannedBank> banks,

            @Schema(description = "Pinned blocks it would release")
            long pinnedBlocks,

            @Schema(description = "Destination blocks it would release")
            long destinationBlocks,

            @Schema(description = "What prevents execution without attestation (e.g. transfers not proven quiesced)")
            List<String> blockers,

            @Schema(description = "Execution needs quiescenceAttested=true")
            boolean attestationRequired,

            @Schema(description = "Digest of the planned state; execution is refused (409) when it changed")
            String fingerprint,

            @Schema(description = "When it was created") Instant createdAt,

            @Schema(description = "The operator who planned it")
            String createdBy,

            @Schema(description = "The execution's outcome, once executed") @Nullable
            Outcome outcome) {}

    /** One unfinished lease: which side the incarnation is, what it holds, whether its transfer is proven quiet. */
    @Schema(name = "CleanupPlannedLease", description = "A lease the plan would end")
    public record PlannedLease(
            @Schema(description = "The lease") UUID leaseId,
            @Schema(description = "The lease's state") String state,

            @Schema(description = "Which side the incarnation is on: SOURCE or DESTINATION")
            String side,

            @Schema(description = "Ranks with a pin") int pinnedRanks,

            @Schema(description = "Blocks pinned by live leases")
            long pinnedBlocks,

            @Schema(description = "Ranks with a destination allocation")
            int destinationRanks,

            @Schema(description = "Destination blocks") long destinationBlocks,

            @Schema(description = "Both sides proven quiesced")
            boolean quiescenceProven) {}

    @Schema(name = "CleanupPlannedBank", description = "A bank the plan would drop")
    public record PlannedBank(
            @Schema(description = "The retained bank") UUID bankId,
            @Schema(description = "The bank's state") String state,

            @Schema(description = "The bank's epoch (bumped by every reset)")
            long bankEpoch,

            @Schema(description = "Blocks it holds") long blocks,

            @Schema(description = "Blocks pinned by live leases")
            long pinnedBlocks) {}

    /** What an execution did. */
    @Schema(name = "CleanupOutcome", description = "What executing a cleanup plan did")
    public record Outcome(
            @Schema(description = "The cleanup plan") UUID planId,
            @Schema(description = "The engine incarnation") UUID incarnationId,

            @Schema(description = "The incarnation's state before")
            String previousState,

            @Schema(description = "The incarnation's state after (RECLAIMED)")
            String state,

            @Schema(description = "The incarnation's epoch after")
            long fencingEpoch,

            @Schema(description = "Leases ended") int leasesEnded,
            @Schema(description = "Pins released") long pinsReleased,

            @Schema(description = "Destination allocations released")
            long destinationsReleased,

            @Schema(description = "Banks dropped") long banksDropped,

            @Schema(description = "Why, in words (recorded in the audit trail)")
            String reason,

            @Schema(description = "An operator attests no transfer can still touch the memory")
            boolean quiescenceAttested,

            @Schema(description = "The operator who executed it")
            String executedBy,

            @Schema(description = "When") Instant executedAt) {}
}
