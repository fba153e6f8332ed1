package io.kvreuse.domain;

import io.kvreuse.testkit.SampleContracts;
import java.util.Map;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;

/** Test contracts: a valid GPU contract unique to each call, and certification over HTTP. */
public final class Contracts {

    private Contracts() {}

    /** A valid TP-2 CUDA IPC contract with a model id nobody else uses. */
    public static Map<String, Object> valid() {
        Map<String, Object> c = SampleContracts.unique("test-model");
        c.put("bytesPerBlockPerRank", 2_097_152);
        return c;
    }

    public static Map<String, Object> with(Map<String, Object> contract, String field, Object value) {
        return SampleContracts.with(contract, field, value);
    }

    /** Certifies a fresh valid contract with the given TP size and returns its domain id. */
    public static String certify(WebTestClient http, String operatorToken, int tpSize) {
        return certify(http, operatorToken, with(valid(), "tpSize", tpSize));
    }

    public static String certify(WebTestClient http, String operatorToken, Map<String, Object> contract) {
        return http.post()
                .uri("/api/v1/domains")
                .header("Authorization", "Bearer " + operatorToken)
                .contentType(MediaType.APPLICATION_JSON)
                .bodyValue(contract)
                .exchange()
                .expectStatus()
                .isCreated()
                .expectBody(Map.class)
                .returnResult()
                .getResponseBody()
                .get("domainId")
                .toString();
    }
}
