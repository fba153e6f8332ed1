package io.kvreuse.admin;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.security.Role;
import io.kvreuse.selection.NoHintReason;
import io.kvreuse.support.Fleet;
import io.kvreuse.support.IntegrationTest;
import io.kvreuse.support.TestTokens;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.web.reactive.server.WebTestClient;

/** The overview's decision table: hints under HINT, no-hints under their reason, no placeholder row. */
@IntegrationTest
class OverviewDecisionsIntegrationTests {

    @Autowired
    WebTestClient http;

    @Autowired
    TestTokens tokens;

    @Autowired
    MetricsSampler sampler;

    @Test
    void decisionsAreHintsAndNoHintsByReasonWithoutAPlaceholder() {
        Map<String, Double> before = sampler.decisionsByReason();
        Fleet fleet = new Fleet(http, tokens);
        Map<String, Object> answer = fleet.post(
                "/api/v1/donor-selections",
                tokens.mint(Role.ROUTER),
                Map.of(
                        "requestId",
                        "req-" + UUID.randomUUID(),
                        "targetIncarnationId",
                        UUID.randomUUID().toString(),
                        "seqHashes",
                        List.of("1", "2"),
                        "localPrefixBlocks",
                        0,
                        "deadlineMs",
                        2000),
                200);
        String reason = (String) answer.get("reason");
        assertThat(reason).isNotNull();

        Map<String, Double> after = sampler.decisionsByReason();
        List<String> expected = new ArrayList<>(List.of("HINT"));
        Arrays.stream(NoHintReason.values()).map(Enum::name).forEach(expected::add);
        assertThat(after.keySet()).containsExactlyInAnyOrderElementsOf(expected);
        assertThat(after).doesNotContainKeys("NONE", "?");
        assertThat(after.get(reason) - before.getOrDefault(reason, 0.0)).isEqualTo(1.0);
        assertThat(after.get("HINT")).isEqualTo(before.get("HINT"));
    }
}
