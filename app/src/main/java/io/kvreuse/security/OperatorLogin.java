package io.kvreuse.security;

import java.util.UUID;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.security.authentication.BadCredentialsException;
import org.springframework.security.core.Authentication;
import org.springframework.security.core.AuthenticationException;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;

/**
 * Signs operators in to the admin UI with their API token (no second password store) and tells
 * whether a signed-in session's token is still active, so a revoked token ends its sessions too.
 */
@Component
public class OperatorLogin {

    private final ApiTokens tokens;
    private final DatabaseClient db;

    OperatorLogin(ApiTokens tokens, DatabaseClient db) {
        this.tokens = tokens;
        this.db = db;
    }

    /**
     * The authenticated operator, or an error: {@link BadCredentialsException} for an unknown or
     * revoked token, {@link NotOperatorException} for a valid token of another role.
     */
    public Mono<Authentication> authenticate(String secret) {
        String presented = secret.strip();
        if (presented.isEmpty() || presented.length() > 512) {
            return Mono.error(new BadCredentialsException("unknown or revoked token"));
        }
        return tokens.authenticate(presented)
                .switchIfEmpty(Mono.error(() -> new BadCredentialsException("unknown or revoked token")))
                .flatMap(p -> p.isOperator()
                        ? Mono.<Authentication>just(new TokenAuthentication(p))
                        : Mono.error(new NotOperatorException(p.role())));
    }

    /** Whether the token behind a session is still active (not revoked). */
    public Mono<Boolean> isActive(UUID tokenId) {
        return db.sql("SELECT revoked_at IS NULL AS active FROM api_token WHERE token_id = :id")
                .bind("id", tokenId)
                .map((row, meta) -> Boolean.TRUE.equals(row.get("active", Boolean.class)))
                .one()
                .defaultIfEmpty(false);
    }

    /** A valid token whose role may not use the admin UI. */
    public static final class NotOperatorException extends AuthenticationException {

        private final Role role;

        NotOperatorException(Role role) {
            super((role == Role.AGENT ? "an " : "a ") + role
                    + " token cannot sign in to the admin UI; use an OPERATOR token");
            this.role = role;
        }

        public Role role() {
            return role;
        }
    }
}
