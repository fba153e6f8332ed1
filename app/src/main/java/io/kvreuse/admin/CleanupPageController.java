package io.kvreuse.admin;

import io.kvreuse.cleanup.CleanupPlans;
import io.kvreuse.cleanup.CleanupRecords;
import io.kvreuse.error.KvReuseException;
import io.kvreuse.security.CurrentPrincipal;
import io.kvreuse.web.Problems;
import java.util.Objects;
import java.util.UUID;
import org.springframework.http.HttpStatus;
import org.springframework.stereotype.Controller;
import org.springframework.ui.Model;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;

/**
 * Operator cleanup of stale banks and dead incarnations, through the same service and rules as
 * the REST API: a dry-run plan first, then a one-time execution with a reason, and — where a
 * transfer is not proven quiesced — the incarnation id typed back as the operator's attestation.
 */
@Controller
class CleanupPageController {

    private final CleanupPlans plans;
    private final BankQueries banks;

    CleanupPageController(CleanupPlans plans, BankQueries banks) {
        this.plans = plans;
        this.banks = banks;
    }

    @GetMapping("/admin/cleanup")
    Mono<String> candidates(Model model) {
        return Mono.zip(
                        plans.candidates(),
                        banks.list(null, IncarnationPagesController.LIST_LIMIT)
                                .filter(BankQueries.BankRow::ownerGone)
                                .collectList())
                .map(t -> {
                    model.addAttribute("candidates", t.getT1());
                    model.addAttribute("orphanBanks", t.getT2());
                    return "admin/cleanup";
                });
    }

    @PostMapping("/admin/cleanup/plans")
    Mono<String> plan(Model model, ServerWebExchange exchange) {
        return exchange.getFormData()
                .map(form -> Objects.requireNonNullElse(form.getFirst("incarnationId"), "")
                        .strip())
                .flatMap(id -> {
                    UUID incarnationId;
                    try {
                        incarnationId = UUID.fromString(id);
                    } catch (IllegalArgumentException e) {
                        return refused(
                                model,
                                exchange,
                                HttpStatus.BAD_REQUEST,
                                "Choose an incarnation to plan a cleanup for.");
                    }
                    return CurrentPrincipal.get()
                            .flatMap(p -> plans.plan(incarnationId, p))
                            .map(plan -> "redirect:/admin/cleanup/plans/" + plan.planId())
                            .onErrorResume(
                                    KvReuseException.class, e -> refused(model, exchange, status(e), e.getMessage()));
                });
    }

    @GetMapping("/admin/cleanup/plans/{planId}")
    Mono<String> show(@PathVariable UUID planId, Model model) {
        return plans.find(planId).map(plan -> {
            model.addAttribute("plan", plan);
            return "admin/cleanup-plan";
        });
    }

    @PostMapping("/admin/cleanup/plans/{planId}/execute")
    Mono<String> execute(@PathVariable UUID planId, Model model, ServerWebExchange exchange) {
        return Mono.zip(exchange.getFormData(), plans.find(planId)).flatMap(t -> {
            CleanupRecords.Plan plan = t.getT2();
            String reason =
                    Objects.requireNonNullElse(t.getT1().getFirst("reason"), "").strip();
            String typed = Objects.requireNonNullElse(t.getT1().getFirst("confirm"), "")
                    .strip();
            boolean attested = typed.equals(plan.incarnationId().toString());
            model.addAttribute("plan", plan);
            model.addAttribute("reason", reason);
            if (reason.isEmpty() || reason.length() > 1000) {
                return failed(model, exchange, HttpStatus.BAD_REQUEST, "A reason (up to 1000 characters) is required.");
            }
            if (plan.attestationRequired() && !attested) {
                return failed(
                        model,
                        exchange,
                        HttpStatus.UNPROCESSABLE_CONTENT,
                        "A transfer of this incarnation is not proven quiesced. Type the incarnation id exactly to attest "
                                + "that you have made sure nothing can still write to its memory.");
            }
            return CurrentPrincipal.get()
                    .flatMap(p -> plans.execute(planId, reason, attested, p))
                    .map(outcome -> "redirect:/admin/cleanup/plans/" + planId + "?executed")
                    .onErrorResume(KvReuseException.class, e -> failed(model, exchange, status(e), e.getMessage()));
        });
    }

    private Mono<String> refused(Model model, ServerWebExchange exchange, HttpStatus status, String message) {
        exchange.getResponse().setStatusCode(status);
        model.addAttribute("planError", message);
        return candidates(model);
    }

    private static Mono<String> failed(Model model, ServerWebExchange exchange, HttpStatus status, String message) {
        exchange.getResponse().setStatusCode(status);
        model.addAttribute("executeError", message);
        return Mono.just("admin/cleanup-plan");
    }

    private static HttpStatus status(KvReuseException e) {
        return Problems.status(e.type());
    }
}
