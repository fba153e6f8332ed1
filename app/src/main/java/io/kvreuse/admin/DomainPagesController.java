package io.kvreuse.admin;

import io.kvreuse.domain.DomainStatus;
import io.kvreuse.domain.LayoutContract;
import io.kvreuse.domain.LayoutDomains;
import io.kvreuse.error.KvReuseException;
import io.kvreuse.security.CurrentPrincipal;
import jakarta.validation.Valid;
import org.jspecify.annotations.Nullable;
import org.springframework.http.HttpStatus;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.stereotype.Controller;
import org.springframework.ui.Model;
import org.springframework.util.LinkedMultiValueMap;
import org.springframework.util.MultiValueMap;
import org.springframework.validation.BindingResult;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.ModelAttribute;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;

/** Layout domains: list, full contract, certification through a form, revocation with a reason. */
@Controller
class DomainPagesController {

    private final LayoutDomains domains;
    private final DatabaseClient db;

    DomainPagesController(LayoutDomains domains, DatabaseClient db) {
        this.domains = domains;
        this.db = db;
    }

    @GetMapping("/admin/domains")
    Mono<String> list(@RequestParam(required = false) @Nullable DomainStatus status, Model model) {
        model.addAttribute("status", status);
        model.addAttribute("statuses", DomainStatus.values());
        return domains.list(status, null, null).collectList().map(list -> {
            model.addAttribute("domains", list);
            return "admin/domains";
        });
    }

    @GetMapping("/admin/domains/new")
    String certifyForm(Model model) {
        model.addAttribute("form", new CertifyForm());
        return formView(model);
    }

    @PostMapping("/admin/domains")
    Mono<String> certify(
            @Valid @ModelAttribute("form") CertifyForm form,
            BindingResult errors,
            Model model,
            ServerWebExchange exchange) {
        LayoutContract contract = form.toContract(errors);
        if (contract == null) {
            exchange.getResponse().setStatusCode(HttpStatus.BAD_REQUEST);
            return Mono.just(formView(model));
        }
        return CurrentPrincipal.get()
                .flatMap(p -> domains.certify(contract, p.actor()))
                .map(c -> "redirect:/admin/domains/" + c.domain().domainId() + (c.created() ? "?certified" : "?same"))
                .onErrorResume(KvReuseException.class, e -> {
                    // a certification rule refused the contract: show why, next to the form
                    exchange.getResponse().setStatusCode(HttpStatus.UNPROCESSABLE_CONTENT);
                    model.addAttribute("refusal", e.getMessage());
                    model.addAttribute("refusalSlug", e.slug());
                    return Mono.just(formView(model));
                });
    }

    private static String formView(Model model) {
        model.addAttribute("memoryLayouts", LayoutContract.MemoryLayout.values());
        model.addAttribute("kvLayouts", LayoutContract.KvLayout.values());
        model.addAttribute("transports", io.kvreuse.domain.TransportClass.values());
        return "admin/domain-new";
    }

    @GetMapping("/admin/domains/{domainId}")
    Mono<String> detail(@PathVariable String domainId, ServerWebExchange exchange, Model model) {
        return show(domainId, exchange.getRequest().getQueryParams(), model);
    }

    /**
     * The one banner the redirect after an action asks for, and only while the domain is still in the
     * state it announces: a plain load shows none, a revoked domain never says "Certified.".
     */
    static @Nullable String notice(MultiValueMap<String, String> query, DomainStatus status) {
        if (status == DomainStatus.REVOKED) {
            return query.containsKey("revoked") ? "revoked" : null;
        }
        if (query.containsKey("certified")) {
            return "certified";
        }
        return query.containsKey("same") ? "same" : null;
    }

    @PostMapping("/admin/domains/{domainId}/revoke")
    Mono<String> revoke(@PathVariable String domainId, ServerWebExchange exchange, Model model) {
        // form fields, not query parameters: WebFlux binds @RequestParam to the query only
        return exchange.getFormData()
                .map(form -> java.util.Objects.requireNonNullElse(form.getFirst("reason"), "")
                        .strip())
                .flatMap(why -> revoke(domainId, why, model, exchange));
    }

    private Mono<String> revoke(String domainId, String why, Model model, ServerWebExchange exchange) {
        if (why.isEmpty() || why.length() > 1000) {
            exchange.getResponse().setStatusCode(HttpStatus.BAD_REQUEST);
            model.addAttribute("revokeError", "A reason (up to 1000 characters) is required to revoke a domain.");
            return show(domainId, new LinkedMultiValueMap<>(), model);
        }
        return CurrentPrincipal.get()
                .flatMap(p -> domains.revoke(domainId, why, p.actor()))
                .thenReturn("redirect:/admin/domains/" + domainId + "?revoked");
    }

    private Mono<String> show(String domainId, MultiValueMap<String, String> query, Model model) {
        return domains.find(domainId).zipWith(incarnationsByState(domainId)).map(t -> {
            model.addAttribute("domain", t.getT1());
            model.addAttribute("notice", notice(query, t.getT1().status()));
            model.addAttribute("contract", t.getT1().contract());
            model.addAttribute("incarnations", t.getT2());
            return "admin/domain";
        });
    }

    private Mono<java.util.Map<String, Long>> incarnationsByState(String domainId) {
        return db.sql(
                        "SELECT state, count(*) AS n FROM engine_incarnation WHERE domain_id = :d GROUP BY state ORDER BY state")
                .bind("d", domainId)
                .map((row, meta) -> java.util.Map.entry(row.get("state", String.class), row.get("n", Long.class)))
                .all()
                .collectMap(java.util.Map.Entry::getKey, java.util.Map.Entry::getValue, java.util.TreeMap::new);
    }
}
