package io.kvreuse.protocol;

import java.nio.file.Path;
import org.springframework.core.env.Environment;

/**
 * The data directory both roles of a host share: {@code KVREUSE_HOME}, default {@code ~/.kvreuse}
 * (the control plane's bootstrap token, the node agent's host lock).
 */
public final class KvReuseHome {

    private KvReuseHome() {}

    public static Path resolve(Environment env) {
        String configured = env.getProperty("kvreuse.home");
        if (configured != null && !configured.isBlank()) {
            return Path.of(configured);
        }
        return Path.of(System.getProperty("user.home"), ".kvreuse");
    }
}
