package io.kvreuse.ops;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.support.OpsFiles;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.yaml.snakeyaml.Yaml;

/**
 * {@code docker/}: the compose file validated by a real Compose implementation (docker-compose 1.29
 * from Debian, whose {@code config} interpolates and validates without a daemon), with no variable
 * set as a plain {@code docker compose up} would see it; the image's entry point run for real. No
 * Docker engine runs on the build machines, so the image itself is not built here.
 */
class DockerFilesTests {

    @TempDir
    Path tmp;

    private static Path docker() {
        return OpsFiles.root().resolve("docker");
    }

    @Test
    @SuppressWarnings("unchecked")
    void composeFileIsValidWithNoVariableSetAndEveryServiceHasAHealthcheck() {
        Tool compose = Tool.require("docker-compose", "docker-compose");
        Tool.Result r = compose.run(OpsFiles.root(), Map.of(), "-f", "docker/compose.yaml", "config");
        assertThat(r.exit()).as(r.output()).isZero();
        Map<String, Object> config = new Yaml().load(r.output());
        Map<String, Map<String, Object>> services = (Map<String, Map<String, Object>>) config.get("services");
        assertThat(services).containsOnlyKeys("postgres", "control-plane", "agent");
        services.forEach((name, s) -> assertThat(s).as(name).containsKey("healthcheck"));
        assertThat(((Map<String, Object>) services.get("control-plane").get("build")).get("context"))
                .as("the build context is the repository root, wherever compose is run from")
                .isEqualTo(OpsFiles.root().toString());
        Map<String, Object> env =
                (Map<String, Object>) services.get("control-plane").get("environment");
        assertThat(env.get("KVREUSE_BOOTSTRAP_TOKEN")).isEqualTo("");
        assertThat(services.get("agent").get("profiles")).isEqualTo(List.of("agent"));

        Tool.Result chosen = compose.run(
                OpsFiles.root(),
                Map.of("KVREUSE_BOOTSTRAP_TOKEN", "kvr_chosen"),
                "-f",
                "docker/compose.yaml",
                "config");
        assertThat(chosen.exit()).isZero();
        assertThat(chosen.output()).contains("KVREUSE_BOOTSTRAP_TOKEN: kvr_chosen");
    }

    @Test
    void composeRefusesARequiredVariableInAnyServiceEvenOneBehindAProfile() throws Exception {
        Tool compose = Tool.require("docker-compose", "docker-compose");
        // what the file did before: the optional agent required its token, and so broke `up` for everyone
        String original = Files.readString(docker().resolve("compose.yaml"));
        String required = original.replace(
                "KVREUSE_AGENT_TOKEN: ${KVREUSE_AGENT_TOKEN:-}",
                "KVREUSE_AGENT_TOKEN: ${KVREUSE_AGENT_TOKEN:?mint one}");
        assertThat(required).isNotEqualTo(original);
        Files.writeString(tmp.resolve("compose.yaml"), required);
        Tool.Result r = compose.run(tmp, Map.of(), "-f", "compose.yaml", "config");
        assertThat(r.exit()).isNotZero();
        assertThat(r.output()).contains("mint one");
        String withoutComments = original.replaceAll("(?m)^\\s*#.*$", "");
        assertThat(Pattern.compile("\\$\\{[A-Z0-9_]+:?\\?")
                        .matcher(withoutComments)
                        .find())
                .as("compose.yaml requires no variable")
                .isFalse();
    }

    @Test
    void dockerfileCopiesTheBuildsRealJarAndChecksHealthThroughItsScript() throws Exception {
        String dockerfile = Files.readString(docker().resolve("Dockerfile"));
        String pom = Files.readString(OpsFiles.root().resolve("app/pom.xml"));
        assertThat(pom).contains("<finalName>kvreuse</finalName>");
        assertThat(dockerfile)
                .contains("cp app/target/kvreuse.jar /out/kvreuse.jar")
                .contains("COPY docker/entrypoint.sh docker/healthcheck.sh /opt/kvreuse/")
                .contains("HEALTHCHECK ")
                .contains("ENTRYPOINT [\"/opt/kvreuse/entrypoint.sh\"]")
                .contains("EXPOSE 8080 8081");
        assertThat(docker().resolve("entrypoint.sh")).isExecutable();
        assertThat(docker().resolve("healthcheck.sh")).isExecutable();
    }

    @Test
    void entrypointGeneratesTheFirstOperatorTokenOnceAndKeepsIt() throws Exception {
        Path home = tmp.resolve("home");
        Tool sh = Tool.require("sh", "dash");
        Path jar = javaThatPrintsItsToken();
        Map<String, String> env =
                Map.of("KVREUSE_HOME", home.toString(), "KVREUSE_JAR", jar.toString(), "PATH", path());

        Tool.Result first = sh.run(tmp, env, docker().resolve("entrypoint.sh").toString(), "--server.port=0");
        assertThat(first.exit()).as(first.output()).isZero();
        Path file = home.resolve("bootstrap-token");
        String token = Files.readString(file).strip();
        assertThat(token).matches("kvr_[0-9a-f]{64}");
        assertThat(Files.getPosixFilePermissions(file)).isEqualTo(PosixFilePermissions.fromString("rw-------"));
        assertThat(first.output()).contains("token=" + token).contains("args=--server.port=0");

        Tool.Result again = sh.run(tmp, env, docker().resolve("entrypoint.sh").toString());
        assertThat(again.output()).contains("token=" + token).doesNotContain("generated");

        Path otherHome = tmp.resolve("other");
        Tool.Result given = sh.run(
                tmp,
                Map.of(
                        "KVREUSE_HOME",
                        otherHome.toString(),
                        "KVREUSE_JAR",
                        jar.toString(),
                        "PATH",
                        path(),
                        "KVREUSE_BOOTSTRAP_TOKEN",
                        "kvr_given"),
                docker().resolve("entrypoint.sh").toString());
        assertThat(given.output()).contains("token=kvr_given");
        assertThat(otherHome.resolve("bootstrap-token")).doesNotExist();
    }

    @Test
    void entrypointStopsAnAgentWithoutItsTokenAndSaysWhy() throws Exception {
        Tool sh = Tool.require("sh", "dash");
        Path jar = javaThatPrintsItsToken();
        Tool.Result r = sh.run(
                tmp,
                Map.of(
                        "KVREUSE_ROLE",
                        "agent",
                        "KVREUSE_HOME",
                        tmp.toString(),
                        "KVREUSE_JAR",
                        jar.toString(),
                        "PATH",
                        path()),
                docker().resolve("entrypoint.sh").toString());
        assertThat(r.exit()).isEqualTo(64);
        assertThat(r.output()).contains("KVREUSE_AGENT_TOKEN is not set").doesNotContain("token=");
        assertThat(tmp.resolve("bootstrap-token")).doesNotExist();
    }

    /** A real Java program in place of the jar: the entry point runs {@code java -jar} on it. */
    private Path javaThatPrintsItsToken() throws Exception {
        Path src = Files.writeString(tmp.resolve("PrintToken.java"), """
                public class PrintToken {
                    public static void main(String[] args) {
                        System.out.println("token=" + System.getenv("KVREUSE_BOOTSTRAP_TOKEN"));
                        System.out.println("args=" + String.join(" ", args));
                    }
                }
                """);
        Path classes = Files.createDirectories(tmp.resolve("classes"));
        Tool javac = new Tool(Path.of(System.getProperty("java.home"), "bin", "javac"));
        assertThat(javac.run(tmp, Map.of(), "-d", classes.toString(), src.toString())
                        .exit())
                .isZero();
        Files.writeString(classes.resolve("manifest.txt"), "Main-Class: PrintToken\n");
        Path jar = tmp.resolve("print-token.jar");
        Tool jarTool = new Tool(Path.of(System.getProperty("java.home"), "bin", "jar"));
        Tool.Result made = jarTool.run(classes, Map.of(), "cfm", jar.toString(), "manifest.txt", "PrintToken.class");
        assertThat(made.exit()).as(made.output()).isZero();
        return jar;
    }

    /** The PATH the entry point finds {@code java} on: this JVM's first. */
    private static String path() {
        return Path.of(System.getProperty("java.home"), "bin") + ":/usr/bin:/bin";
    }
}
