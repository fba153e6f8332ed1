package io.kvreuse.bank;

import org.jspecify.annotations.Nullable;

/** The rule for when a bank is visible to donor selection (DESIGN §3 "Retained bank"). */
record Publication(
        BankState from,
        @Nullable String fromReason,
        BankState to,
        @Nullable String reason) {

    static final String GAP = "EVENT_GAP";
    static final String DISAGREEMENT = "RANK_DISAGREEMENT";
    static final String OWNER_NOT_READY = "OWNER_NOT_READY";

    static Publication decide(
            BankState current,
            @Nullable String currentReason,
            boolean allReady,
            boolean anyGap,
            boolean disagreement,
            String ownerState) {
        if (current == BankState.DROPPED) {
            return new Publication(current, currentReason, current, currentReason);
        }
        if (!allReady) {
            return new Publication(current, currentReason, BankState.PENDING, null);
        }
        String reason =
                anyGap ? GAP : disagreement ? DISAGREEMENT : !"READY".equals(ownerState) ? OWNER_NOT_READY : null;
        return new Publication(
                current, currentReason, reason == null ? BankState.PUBLISHED : BankState.UNPUBLISHED, reason);
    }

    boolean changed() {
        return from != to || !java.util.Objects.equals(fromReason, reason);
    }
}
