package io.kvreuse.audit;

import io.kvreuse.error.InvalidRequestException;
import io.kvreuse.error.ProblemResponse;
import io.kvreuse.error.ProblemType;
import io.swagger.v3.oas.annotations.Operation;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import org.jspecify.annotations.Nullable;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Flux;

/** The audit trail for operators, newest first, paged by {@code before} (an event id). */
@RestController
@RequestMapping("/api/v1/audit")
class AuditController {

    private static final int MAX_LIMIT = 1000;

    private final AuditTrail trail;

    AuditController(AuditTrail trail) {
        this.trail = trail;
    }

    @ProblemResponse(
            value = {ProblemType.INVALID_PARAMETER},
            note = "limit outside 1..1000, since not an RFC 3339 time, before not an integer")
    @Operation(operationId = "findAudit", summary = "Read the audit trail, newest first (OPERATOR)")
    @GetMapping
    Flux<AuditTrail.AuditRecord> find(
            @RequestParam(required = false) @Nullable String subject,
            @RequestParam(required = false) @Nullable String actor,
            @RequestParam(required = false) @Nullable String since,
            @RequestParam(required = false) @Nullable Long before,
            @RequestParam(defaultValue = "100") int limit) {
        if (limit < 1 || limit > MAX_LIMIT) {
            throw new InvalidRequestException(
                    ProblemType.INVALID_PARAMETER, "limit must be between 1 and " + MAX_LIMIT);
        }
        return trail.find(subject, actor, parseSince(since), before == null ? Long.MAX_VALUE : before, limit);
    }

    private static @Nullable Instant parseSince(@Nullable String since) {
        if (since == null || since.isBlank()) {
            return null;
        }
        try {
            return Instant.parse(since);
        } catch (DateTimeParseException e) {
            throw new InvalidRequestException(ProblemType.INVALID_PARAMETER, "since must be an RFC 3339 UTC timestamp");
        }
    }
}
