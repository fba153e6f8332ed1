package io.kvreuse.cleanup;

import io.kvreuse.error.KvReuseException;
import io.kvreuse.error.ProblemType;
import io.kvreuse.incarnation.IncarnationState;
import java.util.List;
import java.util.UUID;

/** Cleanup's problems, each with its stable slug. */
final class CleanupProblems {

    private CleanupProblems() {}

    static KvReuseException noSuchPlan(UUID id) {
        return new KvReuseException(ProblemType.NO_SUCH_CLEANUP_PLAN, "no plan " + id).with("planId", id);
    }

    static KvReuseException executed(UUID id) {
        return new KvReuseException(ProblemType.CLEANUP_PLAN_EXECUTED, "plan " + id + " was executed before")
                .with("planId", id);
    }

    static KvReuseException superseded(UUID id) {
        return new KvReuseException(
                        ProblemType.CLEANUP_PLAN_SUPERSEDED,
                        "a newer plan was made for the incarnation of plan " + id + "; execute that one")
                .with("planId", id);
    }

    static KvReuseException notACandidate(UUID incarnationId, IncarnationState state) {
        return new KvReuseException(
                        ProblemType.NOT_A_CLEANUP_CANDIDATE,
                        "incarnation " + incarnationId + " is " + state
                                + "; only SUSPECT, LOST or RECLAIM_PENDING incarnations, and live banks of owners that"
                                + " EXITED or were RECLAIMED, are cleaned up")
                .with("currentState", state);
    }

    static KvReuseException stale(UUID id) {
        return new KvReuseException(
                        ProblemType.CLEANUP_PLAN_STALE,
                        "what plan " + id + " would release changed since it was made; make a new plan")
                .with("planId", id);
    }

    static KvReuseException attestationRequired(UUID id, List<String> blockers) {
        return new KvReuseException(
                        ProblemType.QUIESCENCE_ATTESTATION_REQUIRED,
                        "transfers of plan " + id + " are not proven quiesced; attest quiescence to execute")
                .with("planId", id)
                .with("blockers", blockers);
    }
}
