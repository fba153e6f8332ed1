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

    public String mint(Role role, String subject) {
        return tokens.getObject()
                .mint(role, subject, "test", "test")
                .map(ApiTokens.MintedToken::token)
                .block(Duration.ofSeconds(10));
    }
}
