package io.kvreuse.ops;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.support.IntegrationTest;
import io.kvreuse.support.OpsFiles;
import java.net.ServerSocket;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.web.server.LocalServerPort;

/** The image's health check script against a running control plane, and against a port where none listens. */
@IntegrationTest
class DockerHealthcheckIntegrationTests {

    @LocalServerPort
    int port;

    @Test
    void healthcheckPassesOnAReadyControlPlaneAndFailsWhereNoneListens() throws Exception {
        Tool sh = Tool.require("sh", "dash");
        Tool.require("curl", "curl");
        String script = OpsFiles.root().resolve("docker/healthcheck.sh").toString();

        Tool.Result ready = sh.run(OpsFiles.root(), Map.of("SERVER_PORT", String.valueOf(port)), script);
        assertThat(ready.exit()).as(ready.output()).isZero();

        int closed;
        try (ServerSocket s = new ServerSocket(0)) {
            closed = s.getLocalPort();
        }
        Tool.Result down = sh.run(OpsFiles.root(), Map.of("SERVER_PORT", String.valueOf(closed)), script);
        assertThat(down.exit()).isNotZero();
    }
}
