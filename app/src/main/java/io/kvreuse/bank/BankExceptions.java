package io.kvreuse.bank;

import io.kvreuse.error.KvReuseException;
import io.kvreuse.error.ProblemType;
import java.util.UUID;

/** The problems of the bank feature, each with its stable slug. */
final class BankExceptions {

    private BankExceptions() {}

    static KvReuseException noSuchBank(UUID bankId) {
        return new KvReuseException(ProblemType.BANK_NOT_FOUND, "no bank " + bankId).with("bankId", bankId);
    }

    static KvReuseException noSuchIncarnation(UUID id) {
        return new KvReuseException(
                        ProblemType.INCARNATION_NOT_FOUND,
                        "no incarnation " + id + " registered by this token's subject")
                .with("incarnationId", id);
    }

    static KvReuseException notDecode(UUID id) {
        return new KvReuseException(
                        ProblemType.NOT_A_DECODE_INCARNATION, "incarnation " + id + " is not a DECODE incarnation")
                .with("incarnationId", id);
    }

    static KvReuseException ownerGone(UUID id, String state) {
        return new KvReuseException(ProblemType.INCARNATION_NOT_LIVE, "incarnation " + id + " is " + state)
                .with("incarnationId", id)
                .with("currentState", state);
    }

    static KvReuseException bankExists(UUID incarnationId, UUID bankId) {
        return new KvReuseException(
                        ProblemType.BANK_EXISTS, "incarnation " + incarnationId + " already retains bank " + bankId)
                .with("bankId", bankId);
    }

    static KvReuseException dropped(UUID bankId) {
        return new KvReuseException(ProblemType.BANK_DROPPED, "bank " + bankId + " was dropped").with("bankId", bankId);
    }

    static KvReuseException noSuchPart(UUID bankId, int rank) {
        return new KvReuseException(ProblemType.BANK_PART_NOT_FOUND, "bank " + bankId + " has no rank " + rank)
                .with("rank", rank);
    }

    static KvReuseException gap(UUID bankId, int rank, long expected) {
        return new KvReuseException(
                        ProblemType.EVENT_GAP,
                        "rank " + rank + " of bank " + bankId + " expected event " + expected
                                + "; the bank is unpublished until this rank sends a snapshot")
                .with("expectedEventId", expected)
                .with("rank", rank);
    }

    static KvReuseException snapshotRequired(UUID bankId, int rank, long lastApplied) {
        return new KvReuseException(
                        ProblemType.SNAPSHOT_REQUIRED,
                        "rank " + rank + " of bank " + bankId + " lost events; send a snapshot before more events")
                .with("appliedThroughEventId", lastApplied)
                .with("rank", rank);
    }

    static KvReuseException staleSnapshot(long through, long applied) {
        return new KvReuseException(
                        ProblemType.STALE_SNAPSHOT,
                        "snapshot through event " + through + " is older than the applied event " + applied)
                .with("appliedThroughEventId", applied);
    }

    static KvReuseException pinned(long seqHash) {
        return new KvReuseException(
                        ProblemType.BLOCK_PINNED,
                        "block " + Long.toUnsignedString(seqHash)
                                + " is pinned by a lease and cannot be removed or overwritten")
                .with("seqHash", Long.toUnsignedString(seqHash));
    }
}
