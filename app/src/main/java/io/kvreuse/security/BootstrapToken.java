package io.kvreuse.security;

import io.kvreuse.protocol.KvReuseHome;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.context.event.EventListener;
import org.springframework.core.annotation.Order;
import org.springframework.core.env.Environment;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;

/**
 * The first operator token: {@code KVREUSE_BOOTSTRAP_TOKEN} when set; in the embedded development
 * mode otherwise, one generated once and kept in {@code $KVREUSE_HOME/bootstrap-token}.
 */
@Component
class BootstrapToken {

    private final ApiTokens tokens;
    private final Environment env;
    private volatile String whereFrom = "none installed yet";

    BootstrapToken(ApiTokens tokens, Environment env) {
        this.tokens = tokens;
        this.env = env;
    }

    /** Where an operator finds the first token, for the start-up banner. */
    String whereFrom() {
        return whereFrom;
    }

    @EventListener(ApplicationReadyEvent.class)
    @Order(0)
    void install() {
        String fromEnv = env.getProperty("KVREUSE_BOOTSTRAP_TOKEN", env.getProperty("kvreuse.bootstrap-token", ""));
        Mono<?> work;
        if (!fromEnv.isBlank()) {
            work = tokens.ensureBootstrap(fromEnv.strip());
            whereFrom = "the value of KVREUSE_BOOTSTRAP_TOKEN";
        } else if (env.getProperty("kvreuse.database.embedded", Boolean.class, false)) {
            Path file = KvReuseHome.resolve(env).resolve("bootstrap-token");
            String secret = readOrCreate(file);
            work = tokens.ensureBootstrap(secret);
            whereFrom = "in the file " + file.toAbsolutePath();
        } else {
            whereFrom =
                    "none configured (KVREUSE_BOOTSTRAP_TOKEN unset): sign in with an OPERATOR token minted earlier";
            return;
        }
        // startup, before the server takes traffic that needs the token: blocking here is intended
        work.block(java.time.Duration.ofSeconds(30));
    }

    private static String readOrCreate(Path file) {
        try {
            if (Files.isRegularFile(file)) {
                return Files.readString(file, StandardCharsets.UTF_8).strip();
            }
            Files.createDirectories(file.getParent());
            String secret = TokenSecrets.generate();
            Files.writeString(file, secret + "\n", StandardCharsets.UTF_8);
            try {
                Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
            } catch (UnsupportedOperationException ignored) {
                // not a POSIX file system: the directory's own permissions apply
            }
            return secret;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot keep the bootstrap token in " + file, e);
        }
    }
}
