package io.kvreuse.incarnation;

import io.kvreuse.support.IntegrationTest;
import io.kvreuse.support.TestTokens;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.web.reactive.server.WebTestClient;

@IntegrationTest
class RegistryOpenApiIntegrationTests {

    @Autowired
    WebTestClient http;

    @Autowired
    TestTokens tokens;

    @Test
    void openApiDescribesRegistryEndpointsWithTheirProblems() {
        http.get()
                .uri("/v3/api-docs")
                .header("Authorization", "Bearer " + tokens.operator())
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody()
                .jsonPath("$.paths['/api/v1/domains'].post.responses['201']")
                .exists()
                .jsonPath("$.paths['/api/v1/domains'].post.responses['422'].content['application/problem+json']")
                .exists()
                .jsonPath("$.paths['/api/v1/domains/{domainId}/revoke'].post.responses['404']")
                .exists()
                .jsonPath("$.paths['/api/v1/incarnations'].post.responses['409'].description")
                .value(d ->
                        org.assertj.core.api.Assertions.assertThat((String) d).contains("gpu-ordinal-in-use"))
                .jsonPath("$.paths['/api/v1/incarnations/{id}/heartbeat'].post.responses['200']")
                .exists()
                .jsonPath("$.paths['/api/v1/incarnations/{id}/heartbeat'].post.responses['409']")
                .exists()
                .jsonPath("$.paths['/api/v1/incarnations/{id}'].get.responses['200'].content")
                .exists()
                .jsonPath("$.paths['/api/v1/domains/{domainId}'].get.responses['200'].content")
                .exists();
    }
}
