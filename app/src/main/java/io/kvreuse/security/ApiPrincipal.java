package io.kvreuse.security;

import java.util.UUID;

/**
 * The caller behind a bearer token. {@code subject} is the token's owner name: engines and agents
 * act only on what was registered under the same subject.
 */
public record ApiPrincipal(UUID tokenId, Role role, String subject) {

    /** The actor name written to the audit trail. */
    public String actor() {
        return role.name().toLowerCase(java.util.Locale.ROOT) + ":" + subject;
    }

    public boolean isOperator() {
        return role == Role.OPERATOR;
    }
}
