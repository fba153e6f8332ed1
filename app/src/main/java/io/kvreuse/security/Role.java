package io.kvreuse.security;

/** What an API token may do (DESIGN §7). */
public enum Role {
    ROUTER,
    ENGINE,
    AGENT,
    OPERATOR;

    String authority() {
        return "ROLE_" + name();
    }
}
