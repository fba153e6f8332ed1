package io.kvreuse.support;

import io.kvreuse.security.ApiTokens;
import io.kvreuse.security.Role;
import java.time.Duration;
import java.util.UUID;
import org.springframework.beans.factory.ObjectProvider;

/** Mints real tokens for tests, each with a unique subject unless one is given. */
public final class TestTokens {

    /** The operator token the integration-test application is started with. */
    public static final String BOOTSTRAP = "kvr_test-bootstrap-operator-token";

    private final ObjectProvider<ApiTokens> tokens;

    TestTokens(ObjectProvider<ApiTokens> tokens) {
        this.tokens = tokens;
    }

    public String operator() {
        return BOOTSTRAP;
    }

    public String mint(Role role) {
        return mint(role, role.name().toLowerCase() + "-" + UUID.randomUUID());
    }

    /** A token with this subject; an AGENT token is bound to the host named like its subject. */
    public String mint(Role role, String subject) {
        return mint(role, subject, role == Role.AGENT ? subject : null);
    }

    /** A token bound to {@code hostId} (AGENT) or scoped to it (ENGINE). */
    public String mint(Role role, String subject, @org.jspecify.annotations.Nullable String hostId) {
        return tokens.getObject()
                .mint(role, subject, hostId, "test", "test")
                .map(ApiTokens.MintedToken::token)
                .block(Duration.ofSeconds(10));
    }
}
