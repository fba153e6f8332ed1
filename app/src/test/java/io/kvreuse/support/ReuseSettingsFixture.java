package io.kvreuse.support;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Consumer;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;

/** Changes the global reuse settings through the API for one test and restores them after. */
public final class ReuseSettingsFixture {

    private static final ParameterizedTypeReference<Map<String, Object>> DOC = new ParameterizedTypeReference<>() {};

    private final WebTestClient http;
    private final String operator;
    private Map<String, Object> original;

    public ReuseSettingsFixture(WebTestClient http, String operator) {
        this.http = http;
        this.operator = operator;
    }

    /** Reuse on, every threshold permissive: tests then tighten the one they exercise. */
    public static void permissive(Map<String, Object> s) {
        s.put("enabled", true);
        s.put("allowMnnvl", false);
        s.put("minFetchBlocks", 1);
        s.put("maxFetchBlocks", 100_000);
        s.put("maxFetchBytes", 1L << 40);
        s.put("maxDonorCandidates", 8);
        s.put("minGainMs", 0.0);
        s.put("minGainRatio", 0.0);
        s.put("maxInflightPerDonor", 100_000);
        s.put("maxInflightPerTarget", 100_000);
    }

    public void apply(Consumer<Map<String, Object>> edit) {
        Map<String, Object> current = read();
        if (original == null) {
            original = current;
        }
        Map<String, Object> doc = new LinkedHashMap<>(current);
        doc.remove("version");
        edit.accept(doc);
        http.put()
                .uri("/api/v1/settings/reuse")
                .header("Authorization", "Bearer " + operator)
                .contentType(MediaType.APPLICATION_JSON)
                .bodyValue(doc)
                .exchange()
                .expectStatus()
                .isOk();
    }

    public void restore() {
        if (original != null) {
            Map<String, Object> doc = new LinkedHashMap<>(original);
            doc.remove("version");
            http.put()
                    .uri("/api/v1/settings/reuse")
                    .header("Authorization", "Bearer " + operator)
                    .contentType(MediaType.APPLICATION_JSON)
                    .bodyValue(doc)
                    .exchange()
                    .expectStatus()
                    .isOk();
            original = null;
        }
    }

    private Map<String, Object> read() {
        return http.get()
                .uri("/api/v1/settings/reuse")
                .header("Authorization", "Bearer " + operator)
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody(DOC)
                .returnResult()
                .getResponseBody();
    }
}
