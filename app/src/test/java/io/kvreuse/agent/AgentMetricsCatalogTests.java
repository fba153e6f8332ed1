package io.kvreuse.agent;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.support.Exposition;
import io.kvreuse.support.OpsFiles;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.test.web.reactive.server.WebTestClient;

/** A node agent's {@code /actuator/prometheus}: naming conventions, and the agent metrics the shipped rules and dashboard name. */
class AgentMetricsCatalogTests {

    @Test
    void agentFamiliesFollowTheConventionsAndServeWhatTheRulesAndDashboardName() throws Exception {
        try (ConfigurableApplicationContext context = AgentRoleTests.agent()) {
            int port = ((WebServerApplicationContext) context).getWebServer().getPort();
            String body = WebTestClient.bindToServer()
                    .baseUrl("http://127.0.0.1:" + port)
                    .build()
                    .get()
                    .uri("/actuator/prometheus")
                    .exchange()
                    .expectStatus()
                    .isOk()
                    .expectBody(String.class)
                    .returnResult()
                    .getResponseBody();
            Exposition e = Exposition.parse(body);

            assertThat(e.violations("kvreuse_")).isEmpty();
            assertThat(e.families().keySet())
                    .contains(
                            "kvreuse_agent_parts_total",
                            "kvreuse_agent_transfer_bytes_total",
                            "kvreuse_agent_control_sent_bytes_total",
                            "kvreuse_agent_emulator_copied_bytes_total")
                    .doesNotContain(
                            "kvreuse_agent_control_bytes_sent_bytes_total",
                            "kvreuse_agent_emulator_bytes_copied_bytes_total");
            assertThat(e.samples("kvreuse_agent_parts_total"))
                    .extracting(s -> s.labels().get("outcome"))
                    .containsExactlyInAnyOrder("done", "failed", "uncertain");

            Set<String> served = e.sampleNames();
            Map<String, List<String>> agent = OpsFiles.usedMetrics().entrySet().stream()
                    .filter(en -> en.getKey().startsWith("kvreuse_agent_"))
                    .collect(Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue, (a, b) -> a, TreeMap::new));
            assertThat(agent).as("agent metrics the rules and dashboard name").hasSizeGreaterThanOrEqualTo(4);
            assertThat(agent.keySet())
                    .as("named by the rules or the dashboard but not served by an agent: %s", agent)
                    .allMatch(served::contains);
        }
    }
}
