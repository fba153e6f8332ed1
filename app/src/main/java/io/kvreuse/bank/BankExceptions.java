package io.kvreuse.bank;

import io.kvreuse.error.KvReuseException;
import io.kvreuse.error.ProblemKind;
import java.util.UUID;

/** The problems of the bank feature, each with its stable slug. */
final class BankExceptions {

    private BankExceptions() {}

    static KvReuseException noSuchBank(UUID bankId) {
        return new KvReuseException(ProblemKind.NOT_FOUND, "bank-not-found", "No such bank", "no bank " + bankId)
                .with("bankId", bankId);
    }

    static KvReuseException noSuchIncarnation(UUID id) {
        return new KvReuseException(
                        ProblemKind.NOT_FOUND,
                        "incarnation-not-found",
                        "No such incarnation",
                        "no incarnation " + id + " registered by this token's subject")
                .with("incarnationId", id);
    }

    static KvReuseException notDecode(UUID id) {
        return new KvReuseException(
                        ProblemKind.REFUSED,
                        "not-a-decode-incarnation",
                        "Only decode incarnations retain banks",
                        "incarnation " + id + " is not a DECODE incarnation")
                .with("incarnationId", id);
    }

    static KvReuseException ownerGone(UUID id, String state) {
        return new KvReuseException(
                        ProblemKind.CONFLICT,
                        "incarnation-not-live",
                        "Incarnation is not live",
                        "incarnation " + id + " is " + state)
                .with("incarnationId", id)
                .with("currentState", state);
    }

    static KvReuseException bankExists(UUID incarnationId, UUID bankId) {
        return new KvReuseException(
                        ProblemKind.CONFLICT,
                        "bank-exists",
                        "Incarnation already has a bank",
                        "incarnation " + incarnationId + " already retains bank " + bankId)
                .with("bankId", bankId);
    }

    static KvReuseException dropped(UUID bankId) {
        return new KvReuseException(
                        ProblemKind.CONFLICT, "bank-dropped", "Bank dropped", "bank " + bankId + " was dropped")
                .with("bankId", bankId);
    }

    static KvReuseException noSuchPart(UUID bankId, int rank) {
        return new KvReuseException(
                        ProblemKind.NOT_FOUND,
                        "bank-part-not-found",
                        "No such bank part",
                        "bank " + bankId + " has no rank " + rank)
                .with("rank", rank);
    }

    static KvReuseException gap(UUID bankId, int rank, long expected) {
        return new KvReuseException(
                        ProblemKind.CONFLICT,
                        "event-gap",
                        "Inventory event gap",
                        "rank " + rank + " of bank " + bankId + " expected event " + expected
                                + "; the bank is unpublished until this rank sends a snapshot")
                .with("expectedEventId", expected)
                .with("rank", rank);
    }

    static KvReuseException snapshotRequired(UUID bankId, int rank, long lastApplied) {
        return new KvReuseException(
                        ProblemKind.CONFLICT,
                        "snapshot-required",
                        "Snapshot required",
                        "rank " + rank + " of bank " + bankId + " lost events; send a snapshot before more events")
                .with("appliedThroughEventId", lastApplied)
                .with("rank", rank);
    }

    static KvReuseException staleSnapshot(long through, long applied) {
        return new KvReuseException(
                        ProblemKind.CONFLICT,
                        "stale-snapshot",
                        "Stale snapshot",
                        "snapshot through event " + through + " is older than the applied event " + applied)
                .with("appliedThroughEventId", applied);
    }

    static KvReuseException pinned(long seqHash) {
        return new KvReuseException(
                        ProblemKind.CONFLICT,
                        "block-pinned",
                        "Block is pinned",
                        "block " + Long.toUnsignedString(seqHash)
                                + " is pinned by a lease and cannot be removed or overwritten")
                .with("seqHash", Long.toUnsignedString(seqHash));
    }
}
