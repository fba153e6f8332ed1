package io.kvreuse.security;

import org.springframework.security.core.context.SecurityContext;
import org.springframework.security.web.server.context.ServerSecurityContextRepository;
import org.springframework.security.web.server.context.WebSessionServerSecurityContextRepository;
import org.springframework.security.web.server.util.matcher.ServerWebExchangeMatcher;
import org.springframework.security.web.server.util.matcher.ServerWebExchangeMatchers;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;

/**
 * Lets an operator signed in to the admin UI read the API documentation with the session cookie.
 * Only the read-only documentation paths look at the session: the API itself stays bearer-only, so
 * a cookie can never authorise a state-changing API call (no CSRF exposure).
 */
final class DocsSessionContextRepository implements ServerSecurityContextRepository {

    static final ServerWebExchangeMatcher DOCS = ServerWebExchangeMatchers.pathMatchers(
            org.springframework.http.HttpMethod.GET,
            "/v3/api-docs",
            "/v3/api-docs/**",
            "/swagger-ui.html",
            "/swagger-ui/**",
            "/webjars/swagger-ui/**");

    private final WebSessionServerSecurityContextRepository sessions = new WebSessionServerSecurityContextRepository();

    @Override
    public Mono<Void> save(ServerWebExchange exchange, SecurityContext context) {
        return Mono.empty();
    }

    @Override
    public Mono<SecurityContext> load(ServerWebExchange exchange) {
        return DOCS.matches(exchange)
                .filter(ServerWebExchangeMatcher.MatchResult::isMatch)
                .flatMap(match -> sessions.load(exchange));
    }
}
