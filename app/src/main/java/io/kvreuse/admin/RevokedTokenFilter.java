package io.kvreuse.admin;

import io.kvreuse.security.ApiPrincipal;
import io.kvreuse.security.OperatorLogin;
import java.net.URI;
import org.springframework.http.HttpStatus;
import org.springframework.security.core.context.ReactiveSecurityContextHolder;
import org.springframework.security.web.server.context.ServerSecurityContextRepository;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Mono;

/**
 * Ends a dashboard session whose API token was revoked since sign-in: the session holds only the
 * token id, so each request under {@code /admin} checks it is still active.
 */
final class RevokedTokenFilter implements WebFilter {

    private final OperatorLogin login;
    private final ServerSecurityContextRepository contexts;

    RevokedTokenFilter(OperatorLogin login, ServerSecurityContextRepository contexts) {
        this.login = login;
        this.contexts = contexts;
    }

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        if (!exchange.getRequest().getPath().value().startsWith("/admin")) {
            return chain.filter(exchange);
        }
        return ReactiveSecurityContextHolder.getContext()
                .mapNotNull(ctx -> ctx.getAuthentication() != null
                                && ctx.getAuthentication().getPrincipal() instanceof ApiPrincipal p
                        ? p
                        : null)
                .flatMap(p -> login.isActive(p.tokenId()))
                .defaultIfEmpty(true)
                .flatMap(active -> active ? chain.filter(exchange) : signOut(exchange));
    }

    private Mono<Void> signOut(ServerWebExchange exchange) {
        return contexts.save(exchange, null)
                .then(exchange.getSession().flatMap(s -> s.invalidate()))
                .then(Mono.fromRunnable(() -> {
                    var response = exchange.getResponse();
                    response.setStatusCode(HttpStatus.SEE_OTHER);
                    response.getHeaders().setLocation(URI.create("/login?error=revoked"));
                }));
    }
}
