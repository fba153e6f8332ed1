package io.kvreuse.config;

import org.springframework.core.env.Environment;

/** The two roles of the one executable ({@code kvreuse.role}), read the same way everywhere. */
public final class Roles {

    public static final String PROPERTY = "kvreuse.role";
    public static final String CONTROL_PLANE = "control-plane";
    public static final String AGENT = "agent";

    private Roles() {}

    /** True when this process runs as a node agent. */
    public static boolean isAgent(Environment env) {
        String role = env.getProperty(PROPERTY, CONTROL_PLANE).trim();
        if (AGENT.equalsIgnoreCase(role)) {
            return true;
        }
        if (CONTROL_PLANE.equalsIgnoreCase(role)) {
            return false;
        }
        throw new IllegalStateException(
                PROPERTY + " must be '" + CONTROL_PLANE + "' or '" + AGENT + "', not '" + role + "'");
    }
}
