package io.kvreuse.selection;

import com.fasterxml.jackson.annotation.JsonRawValue;
import io.swagger.v3.oas.annotations.media.Schema;
import jakarta.validation.Valid;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Size;
import java.util.List;
import java.util.UUID;
import org.jspecify.annotations.Nullable;

/** The wire records of {@code POST /api/v1/donor-selections}. */
final class SelectionApi {

    /** Longest request chain accepted, in blocks. */
    static final int MAX_CHAIN = 65_536;

    private SelectionApi() {}

    @Schema(
            name = "DonorSelectionRequest",
            description =
                    "The router's question: which donor, if any, can give this target a prefix of this request's KV cache")
    record Request(
            @Schema(description = "The router's id of the serving request (1–256 characters); recorded on the lease")
            @NotBlank
            @Size(max = 256)
            String requestId,

            @Schema(description = "The prefill incarnation the router already picked; selection never changes it")
            @NotNull
            UUID targetIncarnationId,

            @Schema(
                    description =
                            "The request's block sequence hashes from the root, u64 as decimal strings (0x hex accepted), 1–65,536")
            // each hash is checked when parsed (a null one too): the validator walking 65,536 elements
            // cost a selection as much as decoding its body
            @NotNull
            @Size(min = 1, max = MAX_CHAIN)
            List<String> seqHashes,

            @Schema(description = "Blocks of the chain the target already holds in its own cache")
            @NotNull
            @Min(0)
            @Max(MAX_CHAIN)
            Integer localPrefixBlocks,

            @Schema(description = "Multimodal lineage of the request's blocks; only blocks of the same lineage match")
            @Nullable
            @Size(min = 1, max = 256)
            String mmLineage,

            @Schema(
                    description =
                            "Longest wait for the answer in milliseconds (default 100); past it the answer is NO_HINT DEADLINE")
            @Nullable
            @Min(1)
            @Max(60_000)
            Integer deadlineMs,

            @Schema(
                    description =
                            "true: the answer also carries an explanation of every candidate considered (default false)")
            @Nullable
            Boolean explain) {

        boolean explained() {
            return Boolean.TRUE.equals(explain);
        }
    }

    @Schema(name = "PredictedGain", description = "What the cost model predicts for the hinted fetch")
    record Predicted(
            @Schema(description = "Blocks the hint fetches") int fetchBlocks,

            @Schema(description = "Predicted transfer time in milliseconds")
            double transferMs,

            @Schema(description = "Predicted time to recompute the same blocks in milliseconds")
            double recomputeMs,

            @Schema(description = "recomputeMs − transferMs")
            double gainMs) {}

    @Schema(
            name = "DonorSelectionResponse",
            description =
                    "The answer: HINT with a lease and a hint envelope, or NO_HINT with one reason; a no-hint is an answer, not an error")
    record Response(
            @Schema(description = "HINT or NO_HINT") String decision,

            @Schema(description = "The PROPOSED lease the hint runs under (HINT only)") @Nullable
            UUID leaseId,

            @Schema(
                    description = "The hint envelope to hand to the target engine (HINT only)",
                    implementation = HintSchema.Envelope.class)
            @JsonRawValue
            @Nullable
            String hint,

            @Schema(description = "The cost model's prediction (HINT only)") @Nullable
            Predicted predicted,

            @Schema(
                    description =
                            "Why there is no hint (NO_HINT only); when candidates fail differently, the reason of the one that got furthest")
            @Nullable
            NoHintReason reason,

            @Schema(description = "Present only when the request asked explain=true") @Nullable
            Explanation explanation) {

        static Response noHint(NoHintReason reason) {
            return new Response("NO_HINT", null, null, null, reason, null);
        }

        static Response hint(UUID leaseId, String hint, Predicted predicted) {
            return new Response("HINT", leaseId, hint, predicted, null, null);
        }

        Response explained(Explanation why) {
            return new Response(decision, leaseId, hint, predicted, reason, why);
        }
    }

    /** Why a selection asked with {@code explain: true} answered what it did. */
    @Schema(name = "SelectionExplanation", description = "Why the selection answered what it did (explain=true only)")
    record Explanation(
            @Schema(description = "The answer in one sentence, starting with its reason")
            String detail,

            @Schema(
                    description =
                            "Each candidate bank considered, in the order considered (chosen and outranked ones after those that dropped out)")
            List<Considered> candidates) {}

    /** One candidate bank considered, its donor, and what became of it. */
    @Schema(
            name = "ConsideredCandidate",
            description = "One candidate bank considered, its donor and what became of it")
    record Considered(
            @Schema(description = "The candidate bank") UUID bankId,

            @Schema(description = "The bank's epoch as indexed")
            long bankEpoch,

            @Schema(description = "The bank's owner, the would-be donor (absent when it is no longer live)") @Nullable
            UUID donorIncarnationId,

            @Schema(description = "Blocks of the request's chain the bank holds from the root")
            int coveredBlocks,

            @Schema(description = "CHOSEN, OUTRANKED (qualified but ranked below the chosen one) or DROPPED")
            String outcome,

            @Schema(description = "Why it dropped out (DROPPED only)") @Nullable
            NoHintReason reason,

            @Schema(
                    description =
                            "The cause in words, e.g. the missing capability, the donor's state, the cost model's prediction")
            String detail) {}

    /** Many selections in one request, for routers that gather the requests of one scheduling step. */
    @Schema(
            name = "DonorSelectionBatchRequest",
            description =
                    "Many selections in one request (1–256), for a router that gathers the requests of one scheduling step")
    record BatchRequest(
            @Schema(description = "The selections, each as the single endpoint takes it")
            @NotNull
            @Size(min = 1, max = 256)
            List<@NotNull @Valid Request> selections) {}

    /** One answer per selection, in order; each exactly what the selection alone would have answered. */
    @Schema(
            name = "DonorSelectionBatchResponse",
            description = "One answer per selection, in order, each what the selection alone would have answered")
    record BatchResponse(
            @Schema(description = "The answers, in the order of the request")
            List<Response> results) {}
}
