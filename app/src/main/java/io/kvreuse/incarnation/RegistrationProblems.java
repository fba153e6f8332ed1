package io.kvreuse.incarnation;

import io.kvreuse.error.InvalidRequestException;
import io.kvreuse.error.KvReuseException;
import io.kvreuse.error.ProblemType;
import java.util.UUID;
import org.jspecify.annotations.Nullable;

/** The refusals of registration and engine reports, one stable slug each. */
final class RegistrationProblems {

    private RegistrationProblems() {}

    static KvReuseException stableNameHeld(String name, @Nullable UUID holder, @Nullable IncarnationState state) {
        return new KvReuseException(
                        ProblemType.STABLE_NAME_HELD,
                        "stable name '" + name + "' is held by incarnation " + holder + " (" + state
                                + "), which did not exit cleanly; an operator must clean it up, or use a new name")
                .with("stableName", name)
                .with("holderIncarnationId", holder)
                .with("holderState", state);
    }

    static KvReuseException gpuOrdinalInUse(String hostId, @Nullable Integer ordinal, @Nullable UUID holder) {
        return new KvReuseException(
                        ProblemType.GPU_ORDINAL_IN_USE,
                        "GPU ordinal " + (ordinal == null ? "(one of the request's)" : ordinal) + " on host "
                                + hostId + " belongs to a live incarnation"
                                + (holder == null ? "" : " (" + holder + ")"))
                .with("hostId", hostId)
                .with("gpuOrdinal", ordinal)
                .with("holderIncarnationId", holder);
    }

    static KvReuseException hostOutOfScope(String hostId, @Nullable String scope) {
        return new KvReuseException(
                        ProblemType.HOST_OUT_OF_SCOPE,
                        "this ENGINE token registers incarnations on host " + scope + " only, not on " + hostId)
                .with("hostId", hostId)
                .with("tokenHostId", scope);
    }

    static KvReuseException idReused(UUID id) {
        return new KvReuseException(
                        ProblemType.INCARNATION_ID_REUSED,
                        "incarnation id " + id + " was registered before; an incarnation id is never reused")
                .with("incarnationId", id);
    }

    static KvReuseException unknownDomain(String domainId) {
        return new KvReuseException(
                        ProblemType.UNKNOWN_DOMAIN,
                        "no layout domain " + domainId + " is certified; an operator certifies it first")
                .with("domainId", domainId);
    }

    static KvReuseException rankLayoutMismatch(int expectedTp, String detail) {
        return new KvReuseException(
                        ProblemType.RANK_LAYOUT_MISMATCH,
                        "the domain has TP " + expectedTp + ", so ranks must be exactly 0.." + (expectedTp - 1) + ": "
                                + detail)
                .with("expectedTpSize", expectedTp);
    }

    static KvReuseException duplicateGpu(String what) {
        return new InvalidRequestException(ProblemType.DUPLICATE_GPU, "two ranks name the same GPU: " + what);
    }

    static KvReuseException lost(UUID id, IncarnationState state) {
        return new KvReuseException(
                        ProblemType.INCARNATION_LOST,
                        "incarnation " + id + " is " + state + "; it never comes back: register a new incarnation")
                .with("incarnationId", id)
                .with("currentState", state);
    }

    static KvReuseException idempotencyKeyReused(String key) {
        return new KvReuseException(
                        ProblemType.IDEMPOTENCY_KEY_REUSED,
                        "Idempotency-Key '" + key + "' was used with a different request body")
                .with("idempotencyKey", key);
    }

    static KvReuseException invalidIdempotencyKey() {
        return new InvalidRequestException(
                ProblemType.INVALID_IDEMPOTENCY_KEY, "Idempotency-Key must be 1 to 200 visible ASCII characters");
    }
}
