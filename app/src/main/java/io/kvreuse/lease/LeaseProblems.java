package io.kvreuse.lease;

import io.kvreuse.error.KvReuseException;
import io.kvreuse.error.ProblemType;
import io.kvreuse.security.Role;
import java.util.UUID;
import org.jspecify.annotations.Nullable;

/** The lease feature's problems, each with its stable slug. */
final class LeaseProblems {

    private LeaseProblems() {}

    static KvReuseException noSuchLease(UUID id) {
        return new KvReuseException(ProblemType.NO_SUCH_LEASE, "no lease " + id).with("leaseId", id);
    }

    /** The caller takes part in the lease, but not on the side it reports for. */
    static KvReuseException notAParty(UUID id, @Nullable Role role) {
        return new KvReuseException(ProblemType.NOT_LEASE_PARTY, "this caller may not report on lease " + id)
                .with("role", role);
    }

    static KvReuseException noSuchCommand(UUID id) {
        return new KvReuseException(ProblemType.NO_SUCH_COMMAND, "no command " + id + " here").with("commandId", id);
    }

    /** The lease is not in a state that accepts this report. */
    static KvReuseException wrongState(UUID id, LeaseState state, String report) {
        return new KvReuseException(
                        ProblemType.LEASE_STATE_CONFLICT,
                        "lease " + id + " is " + state + "; " + report + " is not accepted now")
                .with("leaseId", id)
                .with("currentState", state);
    }

    /** The lease was made under an epoch that is no longer current: it can only run out. */
    static KvReuseException leaseFenced(UUID id, String side, long leaseEpoch, long currentEpoch) {
        return new KvReuseException(
                        ProblemType.LEASE_FENCED,
                        "lease " + id + " was made at " + side + " epoch " + leaseEpoch + "; it is now " + currentEpoch)
                .with("leaseId", id)
                .with("side", side)
                .with("leaseEpoch", leaseEpoch)
                .with("currentEpoch", currentEpoch);
    }

    static KvReuseException staleEpoch(String subject, long presented, long current) {
        return new KvReuseException(
                        ProblemType.STALE_EPOCH,
                        subject + " is at epoch " + current + ", the report carried " + presented)
                .with("presentedEpoch", presented)
                .with("currentEpoch", current);
    }

    static KvReuseException destinationOverlap(UUID id) {
        return new KvReuseException(
                        ProblemType.DESTINATION_OVERLAP,
                        "a destination run of lease " + id + " overlaps slots another lease holds on that rank")
                .with("leaseId", id);
    }

    static KvReuseException destinationDiffers(UUID id) {
        return new KvReuseException(
                        ProblemType.DESTINATION_EXISTS, "lease " + id + " already has a different destination")
                .with("leaseId", id);
    }

    static KvReuseException invalid(String detail) {
        return new KvReuseException(ProblemType.INVALID_REQUEST, detail);
    }
}
