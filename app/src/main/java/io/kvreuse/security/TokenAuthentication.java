package io.kvreuse.security;

import java.util.List;
import org.springframework.security.authentication.AbstractAuthenticationToken;
import org.springframework.security.core.authority.SimpleGrantedAuthority;

/** An authenticated bearer token. */
final class TokenAuthentication extends AbstractAuthenticationToken {

    private final ApiPrincipal principal;

    TokenAuthentication(ApiPrincipal principal) {
        super(List.of(new SimpleGrantedAuthority(principal.role().authority())));
        this.principal = principal;
        setAuthenticated(true);
    }

    @Override
    public Object getCredentials() {
        return "";
    }

    @Override
    public ApiPrincipal getPrincipal() {
        return principal;
    }

    @Override
    public String getName() {
        return principal.actor();
    }
}
