package io.kvreuse.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvreuse.KvReuseApplication;
import io.r2dbc.spi.ConnectionFactory;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.Test;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.test.web.reactive.server.WebTestClient;

/** The jar in the agent role, booted in this JVM: no database of any kind, no control-plane components. */
class AgentRoleTests {

    /** Starts the agent role as the jar would be, with command-line arguments (they override application.yml). */
    static ConfigurableApplicationContext agent(String... extra) throws Exception {
        int unused;
        try (ServerSocket s = new ServerSocket(0)) {
            unused = s.getLocalPort();
        }
        List<String> args = new ArrayList<>(List.of(
                "--kvreuse.role=agent",
                "--server.port=0",
                "--kvreuse.home=target/agent-role-home",
                "--kvreuse.agent.control-plane=http://127.0.0.1:" + unused,
                "--kvreuse.agent.token=test-agent-token",
                "--kvreuse.agent.host-id=host-" + UUID.randomUUID(),
                "--kvreuse.agent.gpus[0].ordinal=0",
                "--kvreuse.agent.gpus[0].uuid=GPU-a",
                "--kvreuse.agent.gpus[1].ordinal=1",
                "--kvreuse.agent.gpus[1].uuid=GPU-b"));
        for (String e : extra) {
            args.add("--" + e);
        }
        return new SpringApplicationBuilder(KvReuseApplication.class).run(args.toArray(String[]::new));
    }

    @Test
    void agentRoleStartsWithoutAnyDatabaseOrControlPlaneComponent() throws Exception {
        try (ConfigurableApplicationContext context = agent()) {
            assertThat(context.getBeanNamesForType(ConnectionFactory.class)).isEmpty();
            assertThat(context.getBeanNamesForType(DataSource.class)).isEmpty();
            assertThat(context.getBeanNamesForType(Flyway.class)).isEmpty();
            assertThat(java.util.Arrays.stream(context.getBeanDefinitionNames())
                            .map(name -> String.valueOf(context.getType(name))))
                    .noneMatch(type ->
                            type.matches("class io\\.kvreuse\\.(selection|lease|orders|bank|incarnation|store)\\..*"));
            assertThat(context.getBean(GpuAgents.class).ucxErrorMode())
                    .as("loopback GPU copies need UCX's error mode none to get cuda_copy")
                    .isEqualTo("none");
            assertThat(context.getBean(GpuAgents.class).names())
                    .hasSize(2)
                    .allMatch(n -> n.startsWith("kvreuse@host-"));

            int port = ((WebServerApplicationContext) context).getWebServer().getPort();
            WebTestClient http = WebTestClient.bindToServer()
                    .baseUrl("http://127.0.0.1:" + port)
                    .build();
            // ready while the control plane is unreachable: the agent keeps retrying by itself
            http.get()
                    .uri("/actuator/health/readiness")
                    .exchange()
                    .expectStatus()
                    .isOk();
            http.get()
                    .uri("/actuator/prometheus")
                    .exchange()
                    .expectStatus()
                    .isOk()
                    .expectBody(String.class)
                    .value(body -> assertThat(body).contains("kvreuse_agent_control_sent_bytes_total"));
            http.get().uri("/api/v1/domains").exchange().expectStatus().isUnauthorized();
        }
    }

    @Test
    void agentRoleWhenNixlLibraryIsMissingThenStartupFailsWithTheReason() {
        assertThatThrownBy(() -> agent("kvreuse.agent.nixl-library=/nonexistent/libnixl_capi.so")
                        .close())
                .hasStackTraceContaining("NIXL is unavailable at /nonexistent/libnixl_capi.so");
    }

    @Test
    void agentRoleWhenHostIsNotConfiguredThenStartupFails() {
        assertThatThrownBy(() -> agent("kvreuse.agent.host-id=").close())
                .hasStackTraceContaining("kvreuse.agent")
                .hasStackTraceContaining("hostId");
    }
}
