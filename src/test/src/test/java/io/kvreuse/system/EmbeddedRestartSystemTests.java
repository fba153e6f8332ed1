package io.kvreuse.system;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.testkit.KvReuseClient;
import io.kvreuse.testkit.SampleContracts;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The README's run mode: the built jar with no database configured starts an embedded PostgreSQL
 * under KVREUSE_HOME, writes the bootstrap operator token, and keeps its data across restarts.
 */
class EmbeddedRestartSystemTests {

    @TempDir
    Path home;

    @Test
    void certifiedDomainAndRegisteredIncarnationSurviveARestart() throws Exception {
        String domainId;
        String incarnationId;
        String operator;
        try (KvReuseProcess kvreuse = KvReuseProcess.startEmbedded(home)) {
            Path tokenFile = home.resolve("bootstrap-token");
            assertThat(tokenFile).exists();
            operator = Files.readString(tokenFile).strip();
            assertThat(kvreuse.tail()).contains("DEVELOPMENT MODE").contains(tokenFile.toString());
            KvReuseClient api = new KvReuseClient(kvreuse.baseUrl());

            var engineToken = api.post("/api/v1/tokens", operator, Map.of("role", "ENGINE", "subject", "decode-pod-a"));
            assertThat(engineToken.status()).as(engineToken.toString()).isEqualTo(201);
            String engine = engineToken.json().get("token").asString();

            var domain = api.post("/api/v1/domains", operator, SampleContracts.llamaTp2());
            assertThat(domain.status()).as(domain.toString()).isEqualTo(201);
            domainId = domain.json().get("domainId").asString();

            var incarnation = api.post(
                    "/api/v1/incarnations",
                    engine,
                    Map.of(
                            "stableName",
                            "decode-pod-a",
                            "role",
                            "DECODE",
                            "domainId",
                            domainId,
                            "hostId",
                            "host-" + UUID.randomUUID(),
                            "controlEndpoint",
                            "tcp://10.0.0.7:5557",
                            "capabilities",
                            List.of("kv.fetch_gpu@1.0"),
                            "ranks",
                            List.of(
                                    Map.of("rank", 0, "gpuOrdinal", 0, "gpuUuid", "GPU-aaaa"),
                                    Map.of("rank", 1, "gpuOrdinal", 1, "gpuUuid", "GPU-bbbb"))));
            assertThat(incarnation.status()).as(incarnation.toString()).isEqualTo(201);
            incarnationId = incarnation.json().get("incarnationId").asString();
        }

        try (KvReuseProcess restarted = KvReuseProcess.startEmbedded(home)) {
            KvReuseClient api = new KvReuseClient(restarted.baseUrl());
            assertThat(Files.readString(home.resolve("bootstrap-token")).strip())
                    .isEqualTo(operator);

            var domain = api.get("/api/v1/domains/" + domainId, operator);
            assertThat(domain.status()).as(domain.toString()).isEqualTo(200);
            assertThat(domain.json().get("status").asString()).isEqualTo("CERTIFIED");

            var incarnation = api.get("/api/v1/incarnations/" + incarnationId, operator);
            assertThat(incarnation.status()).as(incarnation.toString()).isEqualTo(200);
            assertThat(incarnation.json().get("stableName").asString()).isEqualTo("decode-pod-a");
            assertThat(incarnation.json().get("role").asString()).isEqualTo("DECODE");
        }
    }
}
