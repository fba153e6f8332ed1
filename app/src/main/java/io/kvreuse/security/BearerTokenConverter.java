package io.kvreuse.security;

import org.springframework.http.HttpHeaders;
import org.springframework.security.authentication.UsernamePasswordAuthenticationToken;
import org.springframework.security.core.Authentication;
import org.springframework.security.web.server.authentication.ServerAuthenticationConverter;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;

/** Extracts {@code Authorization: Bearer <token>}; anything else leaves the request anonymous. */
final class BearerTokenConverter implements ServerAuthenticationConverter {

    private static final String PREFIX = "Bearer ";

    @Override
    public Mono<Authentication> convert(ServerWebExchange exchange) {
        String header = exchange.getRequest().getHeaders().getFirst(HttpHeaders.AUTHORIZATION);
        if (header == null
                || header.length() <= PREFIX.length()
                || !header.regionMatches(true, 0, PREFIX, 0, PREFIX.length())) {
            return Mono.empty();
        }
        String secret = header.substring(PREFIX.length()).strip();
        if (secret.isEmpty() || secret.length() > 512) {
            return Mono.empty();
        }
        return Mono.just(UsernamePasswordAuthenticationToken.unauthenticated("bearer", secret));
    }
}
