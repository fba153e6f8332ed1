package io.kvreuse.security;

import org.springframework.security.core.context.ReactiveSecurityContextHolder;
import reactor.core.publisher.Mono;

/** Reads the authenticated {@link ApiPrincipal} from the reactive security context. */
public final class CurrentPrincipal {

    private CurrentPrincipal() {}

    public static Mono<ApiPrincipal> get() {
        return ReactiveSecurityContextHolder.getContext()
                .mapNotNull(ctx -> ctx.getAuthentication())
                .mapNotNull(auth -> auth.getPrincipal() instanceof ApiPrincipal p ? p : null);
    }
}
