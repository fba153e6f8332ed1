package io.kvreuse.system;

/**
 * Who calls: a token of each role acting on its own fleet, the same roles acting on another
 * engine's or host's resources, and callers without a valid token.
 */
enum Caller {
    ROUTER("ROUTER", false),
    ENGINE("ENGINE", false),
    AGENT("AGENT", false),
    OPERATOR("OPERATOR", false),
    /** An engine token that registered incarnations of its own, but not the ones addressed. */
    FOREIGN_ENGINE("ENGINE", true),
    /** The agent token of another host. */
    FOREIGN_AGENT("AGENT", true),
    NONE(null, false),
    /** Unknown, malformed or revoked tokens. */
    INVALID(null, false);

    private final String role;
    private final boolean foreign;

    Caller(String role, boolean foreign) {
        this.role = role;
        this.foreign = foreign;
    }

    /** The token's role; null without a valid token. */
    String role() {
        return role;
    }

    boolean foreign() {
        return foreign;
    }
}
