package io.kvreuse.admin;

import org.springframework.security.authentication.UsernamePasswordAuthenticationToken;
import org.springframework.security.core.Authentication;
import org.springframework.security.web.server.authentication.ServerAuthenticationConverter;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;

/** Reads the sign-in form: one field, {@code token}, holding the operator's API token. */
final class TokenLoginConverter implements ServerAuthenticationConverter {

    static final String FIELD = "token";

    @Override
    public Mono<Authentication> convert(ServerWebExchange exchange) {
        return exchange.getFormData().map(form -> {
            String token = form.getFirst(FIELD);
            return UsernamePasswordAuthenticationToken.unauthenticated("operator", token == null ? "" : token);
        });
    }
}
