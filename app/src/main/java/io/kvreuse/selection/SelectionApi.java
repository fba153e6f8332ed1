package io.kvreuse.selection;

import com.fasterxml.jackson.annotation.JsonRawValue;
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

    record Request(
            @NotBlank @Size(max = 256) String requestId,
            @NotNull UUID targetIncarnationId,
            @NotNull @Size(min = 1, max = MAX_CHAIN) List<@NotNull String> seqHashes,
            @NotNull @Min(0) @Max(MAX_CHAIN) Integer localPrefixBlocks,
            @Nullable @Size(min = 1, max = 256) String mmLineage,
            @Nullable @Min(1) @Max(60_000) Integer deadlineMs,
            @Nullable Boolean explain) {

        boolean explained() {
            return Boolean.TRUE.equals(explain);
        }
    }

    record Predicted(int fetchBlocks, double transferMs, double recomputeMs, double gainMs) {}

    record Response(
            String decision,
            @Nullable UUID leaseId,
            @JsonRawValue @Nullable String hint,
            @Nullable Predicted predicted,
            @Nullable NoHintReason reason,
            @Nullable Explanation explanation) {

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
    record Explanation(String detail, List<Considered> candidates) {}

    /** One candidate bank considered, its donor, and what became of it. */
    record Considered(
            UUID bankId,
            long bankEpoch,
            @Nullable UUID donorIncarnationId,
            int coveredBlocks,
            String outcome,
            @Nullable NoHintReason reason,
            String detail) {}

    /** Many selections in one request, for routers that gather the requests of one scheduling step. */
    record BatchRequest(@NotNull @Size(min = 1, max = 256) List<@NotNull @Valid Request> selections) {}

    /** One answer per selection, in order; each exactly what the selection alone would have answered. */
    record BatchResponse(List<Response> results) {}
}
