package io.kvreuse.security;

import io.kvreuse.error.ProblemType;
import io.kvreuse.web.ProblemWriter;
import io.kvreuse.web.Problems.Problem;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.annotation.Order;
import org.springframework.security.authentication.ReactiveAuthenticationManager;
import org.springframework.security.config.annotation.web.reactive.EnableWebFluxSecurity;
import org.springframework.security.config.web.server.SecurityWebFiltersOrder;
import org.springframework.security.config.web.server.ServerHttpSecurity;
import org.springframework.security.core.Authentication;
import org.springframework.security.web.server.SecurityWebFilterChain;
import org.springframework.security.web.server.authentication.AuthenticationWebFilter;
import org.springframework.security.web.server.authentication.ServerAuthenticationEntryPointFailureHandler;
import org.springframework.security.web.server.context.NoOpServerSecurityContextRepository;
import org.springframework.security.web.server.util.matcher.ServerWebExchangeMatchers;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;

/**
 * The API's security: bearer tokens, a role per endpoint family (DESIGN §7). Ownership (an engine
 * acts only on its own incarnations, an agent only for its host) is checked by each feature.
 */
@Configuration
@EnableWebFluxSecurity
class SecurityConfiguration {

    @Bean
    @Order(1)
    SecurityWebFilterChain apiSecurity(ServerHttpSecurity http, ApiTokens tokens, ProblemWriter problems) {
        var unauthorized = (org.springframework.security.web.server.ServerAuthenticationEntryPoint) (exchange, ex) -> {
            exchange.getResponse().getHeaders().set("WWW-Authenticate", "Bearer");
            return problems.write(
                    exchange,
                    new Problem(ProblemType.UNAUTHORIZED, "send a valid API token as 'Authorization: Bearer <token>'"));
        };
        var entryPoint = new BrowserSignInRedirect(unauthorized);
        var bearer = new AuthenticationWebFilter(authenticationManager(tokens));
        bearer.setServerAuthenticationConverter(new BearerTokenConverter());
        bearer.setAuthenticationFailureHandler(new ServerAuthenticationEntryPointFailureHandler(entryPoint));
        bearer.setSecurityContextRepository(NoOpServerSecurityContextRepository.getInstance());

        return http.securityMatcher(ServerWebExchangeMatchers.pathMatchers(
                        "/api/**",
                        "/actuator/**",
                        "/v3/api-docs/**",
                        "/swagger-ui/**",
                        "/swagger-ui.html",
                        "/webjars/swagger-ui/**"))
                .csrf(ServerHttpSecurity.CsrfSpec::disable)
                .httpBasic(ServerHttpSecurity.HttpBasicSpec::disable)
                .formLogin(ServerHttpSecurity.FormLoginSpec::disable)
                .logout(ServerHttpSecurity.LogoutSpec::disable)
                .requestCache(ServerHttpSecurity.RequestCacheSpec::disable)
                .securityContextRepository(new DocsSessionContextRepository())
                .addFilterAt(bearer, SecurityWebFiltersOrder.AUTHENTICATION)
                .exceptionHandling(e -> e.authenticationEntryPoint(entryPoint)
                        .accessDeniedHandler((exchange, denied) ->
                                forbidden(exchange).flatMap(problem -> problems.write(exchange, problem))))
                .authorizeExchange(RoleRules::apply)
                .build();
    }

    /**
     * Requests the firewall rejects (encoded slashes or dots, backslashes, control characters in the
     * path) answer like every other refused API call: a 400 problem, not an empty body.
     */
    @Bean
    org.springframework.security.web.server.firewall.ServerExchangeRejectedHandler rejectedExchanges(
            ProblemWriter problems) {
        var plain = new org.springframework.security.web.server.firewall.HttpStatusExchangeRejectedHandler();
        return (exchange, rejected) -> {
            String path = exchange.getRequest().getPath().value();
            if (!path.startsWith("/api/") && !path.startsWith("/admin/api/") && !path.startsWith("/actuator")) {
                return plain.handle(exchange, rejected);
            }
            return problems.write(
                    exchange,
                    new Problem(
                            ProblemType.REJECTED_REQUEST,
                            "the request URL contains characters or sequences that are not allowed"));
        };
    }

    /** A 403 that names the roles the call needs and the role the token has. */
    private static Mono<Problem> forbidden(ServerWebExchange exchange) {
        Mono<String> tokenRole = exchange.getPrincipal()
                .filter(TokenAuthentication.class::isInstance)
                .map(p -> ((TokenAuthentication) p).getPrincipal().role().name())
                .defaultIfEmpty("");
        return Mono.zip(RoleRules.requiredRoles(exchange), tokenRole).map(t -> {
            List<String> required = t.getT1().stream().map(Role::name).toList();
            String detail = required.isEmpty()
                    ? "this token's role does not allow the call"
                    : (required.size() == 1
                                    ? "this call needs the " + required.getFirst() + " role"
                                    : "this call needs one of the roles " + String.join(", ", required))
                            + (t.getT2().isEmpty() ? "" : "; this token has the " + t.getT2() + " role");
            Map<String, Object> extensions = new LinkedHashMap<>();
            extensions.put("requiredRoles", required);
            if (!t.getT2().isEmpty()) {
                extensions.put("tokenRole", t.getT2());
            }
            return new Problem(ProblemType.FORBIDDEN, detail, extensions);
        });
    }

    private static ReactiveAuthenticationManager authenticationManager(ApiTokens tokens) {
        return authentication -> {
            String secret = String.valueOf(authentication.getCredentials());
            return tokens.authenticate(secret)
                    .<Authentication>map(TokenAuthentication::new)
                    .switchIfEmpty(
                            Mono.error(() -> new org.springframework.security.authentication.BadCredentialsException(
                                    "unknown or revoked token")));
        };
    }
}
