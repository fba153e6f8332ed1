package io.kvreuse.sim.demo;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code demo/run.sh --help} answers at once, without Java or a build, with the demo's own usage text. */
class DemoHelpTests {

    private static final Path SCRIPT =
            Path.of("..", "demo", "run.sh").toAbsolutePath().normalize();

    @TempDir
    Path scratch;

    @Test
    void helpPrintsTheUsageOfTheDemoAndExitsZeroWithoutJavaOrABuild() throws Exception {
        // a JAVA_HOME without Java and a jar that does not exist: help must need neither
        Result help = run(List.of("--help"));
        assertThat(help.status()).as(help.toString()).isZero();
        assertThat(help.stdout()).isEqualTo(DemoOptions.USAGE);
        assertThat(help.stdout()).doesNotContain("building").doesNotContain("no Java 25");
        assertThat(help.stderr()).isEmpty();
        assertThat(scratch.resolve("missing.jar")).doesNotExist();

        Result shortForm = run(List.of("--keep-running", "-h"));
        assertThat(shortForm.status()).as(shortForm.toString()).isZero();
        assertThat(shortForm.stdout()).isEqualTo(DemoOptions.USAGE);
    }

    @Test
    void withoutHelpTheScriptStillInsistsOnJava() throws Exception {
        Result run = run(List.of("--port", "0"));
        assertThat(run.status()).as(run.toString()).isEqualTo(2);
        assertThat(run.stderr()).contains("no Java 25");
        assertThat(run.stdout()).doesNotContain("usage:");
    }

    private record Result(int status, String stdout, String stderr) {}

    private Result run(List<String> args) throws IOException, InterruptedException {
        List<String> cmd = new java.util.ArrayList<>(List.of("bash", SCRIPT.toString()));
        cmd.addAll(args);
        Path out = scratch.resolve("out.txt");
        Path err = scratch.resolve("err.txt");
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectOutput(out.toFile()).redirectError(err.toFile());
        pb.environment().put("JAVA_HOME", scratch.resolve("no-jdk").toString());
        pb.environment().put("KVREUSE_JAR", scratch.resolve("missing.jar").toString());
        Process p = pb.start();
        assertThat(p.waitFor(30, TimeUnit.SECONDS)).as("demo/run.sh answered").isTrue();
        return new Result(
                p.exitValue(),
                Files.readString(out, StandardCharsets.UTF_8),
                Files.readString(err, StandardCharsets.UTF_8));
    }
}
