package io.kvreuse.ops;

import static org.assertj.core.api.Assertions.fail;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;

/**
 * An external validator from a Debian package (promtool, docker-compose). Missing on a developer's
 * machine, the test is skipped and says what to install; missing where {@code CI=true}, it fails:
 * {@code .ci/run} installs both, so CI never passes without checking.
 */
record Tool(Path path) {

    static Tool require(String name, String debianPackage) {
        for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            Path candidate = Path.of(dir, name);
            if (Files.isExecutable(candidate)) {
                return new Tool(candidate);
            }
        }
        String why = name + " is not installed (Debian package " + debianPackage + "; .ci/run installs it)";
        if ("true".equals(System.getenv("CI"))) {
            fail(why);
        }
        Assumptions.abort(why);
        throw new AssertionError("unreachable");
    }

    record Result(int exit, String output) {}

    Result run(Path workDir, Map<String, String> env, String... args) {
        List<String> command = new ArrayList<>();
        command.add(path.toString());
        command.addAll(List.of(args));
        ProcessBuilder pb =
                new ProcessBuilder(command).directory(workDir.toFile()).redirectErrorStream(true);
        pb.environment().keySet().removeIf(k -> k.startsWith("KVREUSE_") || k.startsWith("COMPOSE_"));
        pb.environment().putAll(env);
        try {
            Process p = pb.start();
            p.getOutputStream().close();
            byte[] out = p.getInputStream().readAllBytes();
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                fail(name() + " did not finish in 60 s");
            }
            return new Result(p.exitValue(), new String(out, StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    private String name() {
        return path.getFileName().toString();
    }
}
