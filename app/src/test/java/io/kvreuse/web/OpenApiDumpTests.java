package io.kvreuse.web;

import io.kvreuse.support.IntegrationTest;
import io.kvreuse.support.TestTokens;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.web.reactive.server.WebTestClient;

@IntegrationTest
class OpenApiDumpTests {
    @Autowired
    WebTestClient http;

    @Test
    void dump() throws Exception {
        String doc = http.get()
                .uri("/v3/api-docs")
                .header("Authorization", "Bearer " + TestTokens.BOOTSTRAP)
                .exchange()
                .expectBody(String.class)
                .returnResult()
                .getResponseBody();
        Files.writeString(Path.of("target/openapi.json"), doc);
    }
}
