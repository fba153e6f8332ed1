package io.kvreuse.security;

import java.util.UUID;
import org.jspecify.annotations.Nullable;

/**
 * The caller behind a bearer token. {@code subject} is the token's owner name: engines and agents
 * act only on what was registered under the same subject. {@code hostId} is the host the token is
 * bound to: always for an AGENT token (it acts for that host only), optionally for an ENGINE token
 * (it registers incarnations on that host only), never for routers and operators.
 */
public record ApiPrincipal(
        UUID tokenId, Role role, String subject, @Nullable String hostId) {

    public ApiPrincipal(UUID tokenId, Role role, String subject) {
        this(tokenId, role, subject, null);
    }

    /** The actor name written to the audit trail. */
    public String actor() {
        return role.name().toLowerCase(java.util.Locale.ROOT) + ":" + subject;
    }

    public boolean isOperator() {
        return role == Role.OPERATOR;
    }

    /** The host an AGENT token acts for; null for every other role. */
    public @Nullable String agentHost() {
        return role == Role.AGENT ? hostId : null;
    }

    /** Whether this token may act for or register on {@code host}: a token without a host may. */
    public boolean mayActOn(String host) {
        return hostId == null || hostId.equals(host);
    }
}
