package io.kvreuse.incarnation;

import io.kvreuse.error.InvalidRequestException;
import io.kvreuse.error.KvReuseException;
import io.kvreuse.error.ProblemKind;
import java.util.UUID;
import org.jspecify.annotations.Nullable;

/** The refusals of registration and engine reports, one stable slug each. */
final class RegistrationProblems {

    private RegistrationProblems() {}

    static KvReuseException stableNameHeld(String name, @Nullable UUID holder, @Nullable IncarnationState state) {
        return new KvReuseException(
                        ProblemKind.CONFLICT,
                        "stable-name-held",
                        "Stable name held",
                        "stable name '" + name + "' is held by incarnation " + holder + " (" + state
                                + "), which did not exit cleanly; an operator must clean it up, or use a new name")
                .with("stableName", name)
                .with("holderIncarnationId", holder)
                .with("holderState", state);
    }

    static KvReuseException gpuOrdinalInUse(String hostId, @Nullable Integer ordinal, @Nullable UUID holder) {
        return new KvReuseException(
                        ProblemKind.CONFLICT,
                        "gpu-ordinal-in-use",
                        "GPU ordinal in use",
                        "GPU ordinal " + (ordinal == null ? "(one of the request's)" : ordinal) + " on host "
                                + hostId + " belongs to a live incarnation"
                                + (holder == null ? "" : " (" + holder + ")"))
                .with("hostId", hostId)
                .with("gpuOrdinal", ordinal)
                .with("holderIncarnationId", holder);
    }

    static KvReuseException hostOutOfScope(String hostId, @Nullable String scope) {
        return new KvReuseException(
                        ProblemKind.FORBIDDEN,
                        "host-out-of-scope",
                        "Host outside the token's scope",
                        "this ENGINE token registers incarnations on host " + scope + " only, not on " + hostId)
                .with("hostId", hostId)
                .with("tokenHostId", scope);
    }

    static KvReuseException idReused(UUID id) {
        return new KvReuseException(
                        ProblemKind.CONFLICT,
                        "incarnation-id-reused",
                        "Incarnation id reused",
                        "incarnation id " + id + " was registered before; an incarnation id is never reused")
                .with("incarnationId", id);
    }

    static KvReuseException unknownDomain(String domainId) {
        return new KvReuseException(
                        ProblemKind.REFUSED,
                        "unknown-domain",
                        "Unknown layout domain",
                        "no layout domain " + domainId + " is certified; an operator certifies it first")
                .with("domainId", domainId);
    }

    static KvReuseException rankLayoutMismatch(int expectedTp, String detail) {
        return new KvReuseException(
                        ProblemKind.REFUSED,
                        "rank-layout-mismatch",
                        "Ranks do not match the domain",
                        "the domain has TP " + expectedTp + ", so ranks must be exactly 0.." + (expectedTp - 1) + ": "
                                + detail)
                .with("expectedTpSize", expectedTp);
    }

    static KvReuseException duplicateGpu(String what) {
        return new InvalidRequestException("duplicate-gpu", "Duplicate GPU", "two ranks name the same GPU: " + what);
    }

    static KvReuseException lost(UUID id, IncarnationState state) {
        return new KvReuseException(
                        ProblemKind.CONFLICT,
                        "incarnation-lost",
                        "Incarnation lost",
                        "incarnation " + id + " is " + state + "; it never comes back: register a new incarnation")
                .with("incarnationId", id)
                .with("currentState", state);
    }

    static KvReuseException idempotencyKeyReused(String key) {
        return new KvReuseException(
                        ProblemKind.REFUSED,
                        "idempotency-key-reused",
                        "Idempotency key reused",
                        "Idempotency-Key '" + key + "' was used with a different request body")
                .with("idempotencyKey", key);
    }

    static KvReuseException invalidIdempotencyKey() {
        return new InvalidRequestException(
                "invalid-idempotency-key",
                "Invalid Idempotency-Key",
                "Idempotency-Key must be 1 to 200 visible ASCII characters");
    }
}
