package io.kvreuse.security;

import static io.kvreuse.security.Role.AGENT;
import static io.kvreuse.security.Role.ENGINE;
import static io.kvreuse.security.Role.OPERATOR;
import static io.kvreuse.security.Role.ROUTER;

import java.util.Arrays;
import java.util.List;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import org.springframework.http.HttpMethod;
import org.springframework.security.authorization.AuthenticatedReactiveAuthorizationManager;
import org.springframework.security.authorization.AuthorityReactiveAuthorizationManager;
import org.springframework.security.authorization.AuthorizationDecision;
import org.springframework.security.authorization.ReactiveAuthorizationManager;
import org.springframework.security.config.web.server.ServerHttpSecurity;
import org.springframework.security.web.server.authorization.AuthorizationContext;
import org.springframework.security.web.server.util.matcher.ServerWebExchangeMatcher;
import org.springframework.security.web.server.util.matcher.ServerWebExchangeMatchers;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Which roles may call which endpoint family (DESIGN §7), in the order they are matched. The one
 * table both authorizes requests and names, in a 403 problem, the roles a refused call needs.
 */
final class RoleRules {

    /** One row: requests matching it need one of {@code roles}; empty roles = any valid token, null = no token. */
    record Rule(
            @Nullable HttpMethod method,
            List<String> patterns,
            @Nullable Set<Role> roles) {

        ServerWebExchangeMatcher matcher() {
            String[] p = patterns.toArray(String[]::new);
            return method == null
                    ? ServerWebExchangeMatchers.pathMatchers(p)
                    : ServerWebExchangeMatchers.pathMatchers(method, p);
        }

        ReactiveAuthorizationManager<AuthorizationContext> manager() {
            if (roles == null) {
                return (authentication, context) -> Mono.just(new AuthorizationDecision(true));
            }
            if (roles.isEmpty()) {
                return AuthenticatedReactiveAuthorizationManager.authenticated();
            }
            return AuthorityReactiveAuthorizationManager.hasAnyRole(
                    roles.stream().sorted().map(Role::name).toArray(String[]::new));
        }
    }

    static final List<Rule> RULES = List.of(
            open(null, "/actuator/health", "/actuator/health/**"),
            rule(null, List.of("/actuator/prometheus")),
            rule(null, List.of("/actuator/**"), OPERATOR),
            rule(null, List.of("/api/v1/tokens/**", "/api/v1/tokens"), OPERATOR),
            rule(HttpMethod.GET, List.of("/api/v1/domains/**", "/api/v1/domains")),
            rule(null, List.of("/api/v1/domains/**", "/api/v1/domains"), OPERATOR),
            rule(HttpMethod.GET, List.of("/api/v1/incarnations/*/commands"), ENGINE),
            rule(HttpMethod.GET, List.of("/api/v1/incarnations/**", "/api/v1/incarnations"), ENGINE, OPERATOR, AGENT),
            rule(null, List.of("/api/v1/incarnations/**", "/api/v1/incarnations"), ENGINE),
            rule(HttpMethod.GET, List.of("/api/v1/banks/**"), ENGINE, OPERATOR, AGENT),
            // the host's agent bridges the engines' own KV event streams into their banks
            rule(
                    HttpMethod.POST,
                    List.of("/api/v1/banks/*/events", "/api/v1/banks/*/reset", "/api/v1/banks/*/parts/*/stream-breaks"),
                    ENGINE,
                    AGENT),
            rule(null, List.of("/api/v1/banks/**"), ENGINE),
            rule(null, List.of("/api/v1/donor-selections/**", "/api/v1/donor-selections"), ROUTER),
            rule(HttpMethod.GET, List.of("/api/v1/settings/**")),
            rule(null, List.of("/api/v1/settings/**"), OPERATOR),
            rule(HttpMethod.GET, List.of("/api/v1/leases/**", "/api/v1/leases"), ENGINE, AGENT, OPERATOR),
            rule(null, List.of("/api/v1/leases/*/quiesced"), ENGINE, AGENT, OPERATOR),
            rule(null, List.of("/api/v1/leases/**"), ENGINE, OPERATOR),
            // polling hands orders out (claims them): the host's agent only, operators just read agents
            rule(HttpMethod.GET, List.of("/api/v1/agents/*/orders"), AGENT),
            rule(HttpMethod.GET, List.of("/api/v1/agents/**", "/api/v1/agents"), AGENT, OPERATOR),
            rule(null, List.of("/api/v1/agents/**", "/api/v1/agents", "/api/v1/orders/**"), AGENT),
            rule(null, List.of("/api/v1/cleanup/**", "/api/v1/audit/**", "/api/v1/audit"), OPERATOR));

    private RoleRules() {}

    private static Rule rule(@Nullable HttpMethod method, List<String> patterns, Role... roles) {
        return new Rule(method, patterns, Set.copyOf(Arrays.asList(roles)));
    }

    private static Rule open(@Nullable HttpMethod method, String... patterns) {
        return new Rule(method, List.of(patterns), null);
    }

    static void apply(ServerHttpSecurity.AuthorizeExchangeSpec auth) {
        for (Rule r : RULES) {
            auth.matchers(r.matcher()).access(r.manager());
        }
        auth.anyExchange().authenticated();
    }

    /** The roles the first rule matching this request requires, sorted; empty when any token will do. */
    static Mono<List<Role>> requiredRoles(ServerWebExchange exchange) {
        return Flux.fromIterable(RULES)
                .concatMap(r ->
                        r.matcher().matches(exchange).filter(m -> m.isMatch()).map(m -> r))
                .next()
                .map(r -> r.roles() == null
                        ? List.<Role>of()
                        : r.roles().stream().sorted().toList())
                .defaultIfEmpty(List.of());
    }
}
