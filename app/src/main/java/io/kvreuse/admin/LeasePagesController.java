package io.kvreuse.admin;

import io.kvreuse.error.KvReuseException;
import io.kvreuse.error.ProblemType;
import java.util.UUID;
import org.jspecify.annotations.Nullable;
import org.springframework.stereotype.Controller;
import org.springframework.ui.Model;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RequestParam;
import reactor.core.publisher.Mono;

/** Leases: filter by state, UNCERTAIN and overdue ones highlighted; per-rank parts with bandwidth. */
@Controller
class LeasePagesController {

    private final LeaseQueries leases;

    LeasePagesController(LeaseQueries leases) {
        this.leases = leases;
    }

    @GetMapping("/admin/leases")
    Mono<String> list(@RequestParam(required = false) @Nullable String state, Model model) {
        String wanted = IncarnationPagesController.blankToNull(state);
        if (wanted != null && !LeaseQueries.STATES.contains(wanted)) {
            return Mono.error(
                    new KvReuseException(ProblemType.INVALID_PARAMETER, "unknown lease state '" + wanted + "'"));
        }
        model.addAttribute("state", wanted);
        model.addAttribute("states", LeaseQueries.STATES);
        model.addAttribute("limit", IncarnationPagesController.LIST_LIMIT);
        return leases.list(wanted, null, null, IncarnationPagesController.LIST_LIMIT)
                .collectList()
                .map(list -> {
                    model.addAttribute("leases", list);
                    return "admin/leases";
                });
    }

    @GetMapping("/admin/leases/{leaseId}")
    Mono<String> detail(@PathVariable UUID leaseId, Model model) {
        return leases.find(leaseId)
                .switchIfEmpty(Mono.error(() -> new KvReuseException(ProblemType.NO_SUCH_LEASE, "no lease " + leaseId)))
                .flatMap(lease -> Mono.zip(
                                leases.parts(leaseId).collectList(),
                                leases.holds(leaseId).collectList())
                        .map(t -> {
                            model.addAttribute("lease", lease);
                            model.addAttribute("parts", t.getT1());
                            model.addAttribute("holds", t.getT2());
                            return "admin/lease";
                        }));
    }
}
