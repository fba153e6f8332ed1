package io.kvreuse.docs;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.support.IntegrationTest;
import io.kvreuse.support.TestTokens;
import java.nio.file.Files;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * {@code docs/api.md} describes the API that is served: every operation under {@code /api/v1} of
 * the served OpenAPI document is in it, and it names no operation that is not served.
 */
@IntegrationTest
class ApiDocumentationIntegrationTests {

    private static final Pattern OPERATION =
            Pattern.compile("\\b(GET|POST|PUT|DELETE|PATCH) (/api/v1/[A-Za-z0-9/{}._-]*[A-Za-z0-9}])");
    private static final Set<String> METHODS = Set.of("get", "post", "put", "delete", "patch");

    @Autowired
    WebTestClient http;

    @Autowired
    TestTokens tokens;

    @Test
    void theApiGuideNamesExactlyTheServedOperations() throws Exception {
        Set<String> served = served();
        Set<String> documented = documented(Files.readAllLines(Markdown.root().resolve("docs/api.md")));
        assertThat(served).as("served operations").hasSizeGreaterThan(40);

        Set<String> undocumented = new TreeSet<>(served);
        undocumented.removeAll(documented);
        Set<String> notServed = new TreeSet<>(documented);
        notServed.removeAll(served);
        assertThat(undocumented).as("served but not in docs/api.md").isEmpty();
        assertThat(notServed).as("in docs/api.md but not served").isEmpty();
    }

    @Test
    void operationsAreReadFromTheGuideWhereverItNamesThem() {
        assertThat(documented(List.of(
                        "* `GET /api/v1/incarnations?state=&role=`, `GET /api/v1/incarnations/{id}` → …",
                        "| `POST /api/v1/agents/{hostId}/parts {fencingEpoch}` | `POST …/commands/{commandId}/ack` |",
                        "`POST /api/v1/leases/{leaseId}/abort",
                        "  {fencingEpoch?, reason?}`")))
                .containsExactlyInAnyOrder(
                        "GET /api/v1/incarnations",
                        "GET /api/v1/incarnations/{}",
                        "POST /api/v1/agents/{}/parts",
                        "POST /api/v1/leases/{}/abort");
    }

    private Set<String> served() {
        Map<String, Object> doc = http.get()
                .uri("/v3/api-docs")
                .header("Authorization", "Bearer " + tokens.operator())
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody(new ParameterizedTypeReference<Map<String, Object>>() {})
                .returnResult()
                .getResponseBody();
        @SuppressWarnings("unchecked")
        Map<String, Map<String, Object>> paths = (Map<String, Map<String, Object>>) doc.get("paths");
        Set<String> ops = new TreeSet<>();
        paths.forEach((path, item) -> {
            if (path.startsWith("/api/v1/")) {
                item.keySet().stream()
                        .filter(METHODS::contains)
                        .forEach(m -> ops.add(m.toUpperCase(java.util.Locale.ROOT) + " " + normal(path)));
            }
        });
        return ops;
    }

    static Set<String> documented(List<String> lines) {
        Set<String> ops = new TreeSet<>();
        for (String line : lines) {
            Matcher m = OPERATION.matcher(line);
            while (m.find()) {
                ops.add(m.group(1) + " " + normal(m.group(2)));
            }
        }
        return ops;
    }

    /** Path parameters compare by position, not by name. */
    private static String normal(String path) {
        return path.replaceAll("\\{[^}]*}", "{}");
    }
}
