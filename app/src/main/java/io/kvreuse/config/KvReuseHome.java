package io.kvreuse.config;

import java.nio.file.Path;
import org.springframework.core.env.Environment;

/** The data directory: {@code KVREUSE_HOME}, default {@code ~/.kvreuse}. */
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
