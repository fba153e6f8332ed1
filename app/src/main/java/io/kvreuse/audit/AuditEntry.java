package io.kvreuse.audit;

import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * One append-only audit row: who did what to which subject, the state change and epoch if any,
 * the operator's reason, and structured detail (never secrets or NIXL metadata).
 */
public record AuditEntry(
        String actor,
        String subjectType,
        String subjectId,
        String action,
        @Nullable String fromState,
        @Nullable String toState,
        @Nullable Long epoch,
        @Nullable String reason,
        Map<String, ?> detail) {

    public static AuditEntry action(String actor, String subjectType, String subjectId, String action) {
        return new AuditEntry(actor, subjectType, subjectId, action, null, null, null, null, Map.of());
    }

    public static AuditEntry transition(
            String actor, String subjectType, String subjectId, String from, String to, long epoch) {
        return new AuditEntry(actor, subjectType, subjectId, "TRANSITION", from, to, epoch, null, Map.of());
    }

    public AuditEntry withReason(@Nullable String reason) {
        return new AuditEntry(actor, subjectType, subjectId, action, fromState, toState, epoch, reason, detail);
    }

    public AuditEntry withDetail(Map<String, ?> detail) {
        return new AuditEntry(actor, subjectType, subjectId, action, fromState, toState, epoch, reason, detail);
    }
}
