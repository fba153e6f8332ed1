package io.kvreuse.admin;

import io.kvreuse.audit.AuditTrail;
import io.kvreuse.incarnation.EngineRole;
import io.kvreuse.incarnation.IncarnationState;
import io.kvreuse.incarnation.Incarnations;
import io.kvreuse.security.CurrentPrincipal;
import java.util.UUID;
import org.jspecify.annotations.Nullable;
import org.springframework.stereotype.Controller;
import org.springframework.ui.Model;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RequestParam;
import reactor.core.publisher.Mono;

/** Engine incarnations: a filterable list, and one incarnation with its ranks, history, banks and leases. */
@Controller
class IncarnationPagesController {

    static final int LIST_LIMIT = 500;
    private static final int HISTORY_LIMIT = 200;

    private final Incarnations incarnations;
    private final AuditTrail audit;
    private final LeaseQueries leases;
    private final BankQueries banks;

    IncarnationPagesController(Incarnations incarnations, AuditTrail audit, LeaseQueries leases, BankQueries banks) {
        this.incarnations = incarnations;
        this.audit = audit;
        this.leases = leases;
        this.banks = banks;
    }

    @GetMapping("/admin/incarnations")
    Mono<String> list(
            @RequestParam(required = false) @Nullable IncarnationState state,
            @RequestParam(required = false) @Nullable EngineRole role,
            @RequestParam(required = false) @Nullable String domainId,
            @RequestParam(required = false) @Nullable String hostId,
            Model model) {
        String domain = blankToNull(domainId);
        String host = blankToNull(hostId);
        model.addAttribute("state", state);
        model.addAttribute("role", role);
        model.addAttribute("domainId", domain);
        model.addAttribute("hostId", host);
        model.addAttribute("states", IncarnationState.values());
        model.addAttribute("roles", EngineRole.values());
        model.addAttribute("limit", LIST_LIMIT);
        return CurrentPrincipal.get()
                .flatMapMany(op -> incarnations.list(state, role, domain, host, op, LIST_LIMIT))
                .collectList()
                .map(list -> {
                    model.addAttribute("incarnations", list);
                    return "admin/incarnations";
                });
    }

    @GetMapping("/admin/incarnations/{id}")
    Mono<String> detail(@PathVariable UUID id, Model model) {
        String subject = id.toString();
        return Mono.zip(
                        incarnations.find(id),
                        audit.find(subject, null, null, Long.MAX_VALUE, HISTORY_LIMIT)
                                .collectList(),
                        banks.ofIncarnation(id).collectList(),
                        leases.list(null, id, null, 100).collectList())
                .map(t -> {
                    model.addAttribute("inc", t.getT1());
                    model.addAttribute(
                            "names",
                            t.getT1().stableName() == null
                                    ? java.util.Map.of()
                                    : java.util.Map.of(
                                            subject,
                                            new EngineNames.EngineName(
                                                    t.getT1().stableName(),
                                                    t.getT1().hostId())));
                    model.addAttribute(
                            "transitions",
                            t.getT2().stream().filter(e -> e.toState() != null).toList());
                    model.addAttribute("audit", t.getT2());
                    model.addAttribute("banks", t.getT3());
                    model.addAttribute("leases", t.getT4());
                    return "admin/incarnation";
                });
    }

    static @Nullable String blankToNull(@Nullable String s) {
        return s == null || s.isBlank() ? null : s.strip();
    }
}
