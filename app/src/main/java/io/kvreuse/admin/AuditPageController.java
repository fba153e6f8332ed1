package io.kvreuse.admin;

import io.kvreuse.audit.AuditTrail;
import io.kvreuse.error.InvalidRequestException;
import io.kvreuse.error.ProblemType;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import org.jspecify.annotations.Nullable;
import org.springframework.stereotype.Controller;
import org.springframework.ui.Model;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import reactor.core.publisher.Mono;

/** The audit trail, newest first, filtered by subject, actor and time, paged by event id. */
@Controller
class AuditPageController {

    static final int PAGE = 50;

    private final AuditTrail trail;
    private final EngineNames names;

    AuditPageController(AuditTrail trail, EngineNames names) {
        this.trail = trail;
        this.names = names;
    }

    @GetMapping("/admin/audit")
    Mono<String> audit(
            @RequestParam(required = false) @Nullable String subject,
            @RequestParam(required = false) @Nullable String actor,
            @RequestParam(required = false) @Nullable String since,
            @RequestParam(required = false) @Nullable Long before,
            Model model) {
        String s = IncarnationPagesController.blankToNull(subject);
        String a = IncarnationPagesController.blankToNull(actor);
        String from = IncarnationPagesController.blankToNull(since);
        Instant sinceAt = parse(from);
        if (before != null && before < 1) {
            throw new InvalidRequestException(ProblemType.INVALID_PARAMETER, "before must be an event id");
        }
        model.addAttribute("subject", s);
        model.addAttribute("actor", a);
        model.addAttribute("since", from);
        model.addAttribute("before", before);
        // one more than a page tells whether an older page exists
        return trail.find(s, a, sinceAt, before == null ? Long.MAX_VALUE : before, PAGE + 1)
                .collectList()
                .flatMap(rows -> {
                    boolean more = rows.size() > PAGE;
                    var page = more ? rows.subList(0, PAGE) : rows;
                    model.addAttribute("events", page);
                    model.addAttribute("olderBefore", more ? page.getLast().eventId() : null);
                    return names.of(page).map(known -> {
                        model.addAttribute("names", known);
                        return "admin/audit";
                    });
                });
    }

    private static @Nullable Instant parse(@Nullable String since) {
        if (since == null) {
            return null;
        }
        try {
            return Instant.parse(since);
        } catch (DateTimeParseException e) {
            throw new InvalidRequestException(
                    ProblemType.INVALID_PARAMETER, "'since' must be an RFC 3339 UTC time such as 2026-01-31T12:00:00Z");
        }
    }
}
