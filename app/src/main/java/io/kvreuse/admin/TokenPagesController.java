package io.kvreuse.admin;

import io.kvreuse.error.KvReuseException;
import io.kvreuse.error.ProblemType;
import io.kvreuse.security.ApiTokens;
import io.kvreuse.security.CurrentPrincipal;
import io.kvreuse.security.Role;
import java.util.Arrays;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import org.jspecify.annotations.Nullable;
import org.springframework.http.HttpStatus;
import org.springframework.stereotype.Controller;
import org.springframework.ui.Model;
import org.springframework.util.MultiValueMap;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;

/**
 * API tokens: list, mint and revoke through {@link ApiTokens}, so the rules of the token API hold
 * (roles, host binding of AGENT tokens, the audit). A minted secret is kept in the operator's
 * session only until the token's page has shown it once; a reload shows it no more. Revoking
 * asks for the token's subject typed back.
 */
@Controller
class TokenPagesController {

    static final int LIST_LIMIT = 500;
    static final String MINTED = "kvreuse.admin.minted-token";

    private final ApiTokens tokens;
    private final TokenQueries queries;

    TokenPagesController(ApiTokens tokens, TokenQueries queries) {
        this.tokens = tokens;
        this.queries = queries;
    }

    @GetMapping("/admin/tokens")
    Mono<String> list(
            @RequestParam(defaultValue = "active") String status,
            @RequestParam(required = false) @Nullable String role,
            @RequestParam(required = false) @Nullable String subject,
            Model model) {
        if (!TokenQueries.STATUSES.contains(status)) {
            return Mono.error(invalid("status must be one of " + String.join(", ", TokenQueries.STATUSES)));
        }
        Role wantedRole = role == null || role.isBlank() ? null : parseRole(role);
        if (role != null && !role.isBlank() && wantedRole == null) {
            return Mono.error(invalid("role must be one of " + Arrays.toString(Role.values())));
        }
        model.addAttribute("status", status);
        model.addAttribute("role", wantedRole);
        model.addAttribute("subject", IncarnationPagesController.blankToNull(subject));
        return render(model, TokenForm.empty());
    }

    @PostMapping("/admin/tokens")
    Mono<String> mint(Model model, ServerWebExchange exchange) {
        return exchange.getFormData().flatMap(data -> {
            TokenForm form = TokenForm.of(data);
            if (!form.errors().isEmpty()) {
                return refused(model, exchange, form, HttpStatus.BAD_REQUEST);
            }
            return CurrentPrincipal.get()
                    .flatMap(op -> Mono.defer(() -> tokens.mint(
                            form.parsedRole(), form.subject(), form.hostOrNull(), form.description(), op.actor())))
                    .flatMap(minted -> exchange.getSession().map(session -> {
                        session.getAttributes().put(MINTED, minted);
                        return "redirect:/admin/tokens/" + minted.tokenId();
                    }))
                    .onErrorResume(
                            KvReuseException.class,
                            e -> refused(
                                    model,
                                    exchange,
                                    form.withError("hostId", e.getMessage()),
                                    io.kvreuse.web.Problems.status(e.type())));
        });
    }

    @GetMapping("/admin/tokens/{tokenId}")
    Mono<String> detail(@PathVariable UUID tokenId, Model model, ServerWebExchange exchange) {
        // never cached: the page may carry a secret, shown this once
        exchange.getResponse().getHeaders().setCacheControl("no-store");
        return find(tokenId)
                .flatMap(token -> exchange.getSession().flatMap(session -> {
                    Object minted = session.getAttributes().get(MINTED);
                    if (minted instanceof ApiTokens.MintedToken m && m.tokenId().equals(tokenId)) {
                        session.getAttributes().remove(MINTED);
                        model.addAttribute("secret", m.token());
                    }
                    return detailPage(model, token);
                }));
    }

    @PostMapping("/admin/tokens/{tokenId}/revoke")
    Mono<String> revoke(@PathVariable UUID tokenId, Model model, ServerWebExchange exchange) {
        return Mono.zip(exchange.getFormData(), find(tokenId)).flatMap(t -> {
            TokenQueries.TokenRow token = t.getT2();
            String typed = Objects.requireNonNullElse(t.getT1().getFirst("confirm"), "")
                    .strip();
            if (!token.active()) {
                return failed(model, exchange, token, HttpStatus.CONFLICT, "This token is already revoked.");
            }
            if (!typed.equals(token.subject())) {
                return failed(
                        model,
                        exchange,
                        token,
                        HttpStatus.UNPROCESSABLE_CONTENT,
                        "Type the token's subject exactly to confirm. Nothing was revoked.");
            }
            return CurrentPrincipal.get()
                    .flatMap(op -> tokens.revoke(tokenId, op.actor()))
                    .flatMap(revoked -> revoked
                            ? Mono.just("redirect:/admin/tokens/" + tokenId + "?revoked")
                            : failed(model, exchange, token, HttpStatus.CONFLICT, "This token is already revoked."));
        });
    }

    private Mono<TokenQueries.TokenRow> find(UUID tokenId) {
        return queries.find(tokenId)
                .switchIfEmpty(
                        Mono.error(() -> new KvReuseException(ProblemType.TOKEN_NOT_FOUND, "no token " + tokenId)));
    }

    private Mono<String> detailPage(Model model, TokenQueries.TokenRow token) {
        return CurrentPrincipal.get().map(op -> {
            model.addAttribute("token", token);
            model.addAttribute("own", op.tokenId().equals(token.tokenId()));
            return "admin/token";
        });
    }

    private Mono<String> failed(
            Model model, ServerWebExchange exchange, TokenQueries.TokenRow token, HttpStatus status, String message) {
        exchange.getResponse().setStatusCode(status);
        model.addAttribute("revokeError", message);
        return detailPage(model, token);
    }

    private Mono<String> refused(Model model, ServerWebExchange exchange, TokenForm form, HttpStatus status) {
        exchange.getResponse().setStatusCode(status);
        model.addAttribute("status", "active");
        return render(model, form);
    }

    private Mono<String> render(Model model, TokenForm form) {
        String status = (String) model.getAttribute("status");
        Role role = (Role) model.getAttribute("role");
        String subject = (String) model.getAttribute("subject");
        model.addAttribute("form", form);
        model.addAttribute("roles", Role.values());
        model.addAttribute("statuses", TokenQueries.STATUSES);
        model.addAttribute("limit", LIST_LIMIT);
        return queries.list(status == null ? "active" : status, role, subject, LIST_LIMIT)
                .collectList()
                .map(list -> {
                    model.addAttribute("tokens", list);
                    return "admin/tokens";
                });
    }

    private static @Nullable Role parseRole(String s) {
        return Arrays.stream(Role.values())
                .filter(r -> r.name().equals(s.strip()))
                .findFirst()
                .orElse(null);
    }

    private static KvReuseException invalid(String detail) {
        return new KvReuseException(ProblemType.INVALID_PARAMETER, detail);
    }

    /** The mint form as typed, with the same limits as {@code POST /api/v1/tokens}. */
    record TokenForm(String role, String subject, String hostId, String description, Map<String, String> errors) {

        static TokenForm empty() {
            return new TokenForm("", "", "", "", Map.of());
        }

        static TokenForm of(MultiValueMap<String, String> data) {
            String role = field(data, "role").strip();
            String subject = field(data, "subject").strip();
            String host = field(data, "hostId");
            String description = field(data, "description");
            Map<String, String> errors = new java.util.LinkedHashMap<>();
            if (parseRole(role) == null) {
                errors.put("role", "choose a role");
            }
            if (subject.isEmpty() || subject.length() > 200) {
                errors.put("subject", "a subject of 1 to 200 characters is required");
            }
            if (!host.isEmpty() && (host.length() > 253 || !host.equals(host.strip()))) {
                errors.put("hostId", "a host id of up to 253 characters, without leading or trailing spaces");
            }
            if (description.length() > 1000) {
                errors.put("description", "at most 1000 characters");
            }
            return new TokenForm(role, subject, host, description, errors);
        }

        private static String field(MultiValueMap<String, String> data, String name) {
            return Objects.requireNonNullElse(data.getFirst(name), "");
        }

        Role parsedRole() {
            return Objects.requireNonNull(parseRole(role));
        }

        @Nullable
        String hostOrNull() {
            return hostId.isEmpty() ? null : hostId;
        }

        TokenForm withError(String field, String message) {
            Map<String, String> more = new java.util.LinkedHashMap<>(errors);
            more.put(field, message);
            return new TokenForm(role, subject, hostId, description, more);
        }

        public @Nullable String error(String field) {
            return errors.get(field);
        }
    }
}
