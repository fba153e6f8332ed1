package io.kvreuse.security;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.support.IntegrationTest;
import io.kvreuse.support.TestTokens;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;

@IntegrationTest
class TokenApiIntegrationTests {

    @Autowired
    WebTestClient http;

    @Autowired
    TestTokens tokens;

    @Test
    void requestWithoutTokenThenUnauthorizedProblem() {
        http.get()
                .uri("/api/v1/tokens")
                .exchange()
                .expectStatus()
                .isUnauthorized()
                .expectHeader()
                .contentType(MediaType.APPLICATION_PROBLEM_JSON)
                .expectBody()
                .jsonPath("$.type")
                .isEqualTo("https://kvreuse.io/problems/unauthorized");
    }

    @Test
    void requestWithUnknownTokenThenUnauthorized() {
        http.get()
                .uri("/api/v1/tokens")
                .header("Authorization", "Bearer kvr_nope")
                .exchange()
                .expectStatus()
                .isUnauthorized();
    }

    @Test
    void healthIsOpen() {
        http.get().uri("/actuator/health").exchange().expectStatus().isOk();
    }

    @Test
    void mintedTokenAuthenticatesWithItsRoleOnly() {
        String engine = mint("ENGINE");
        http.get()
                .uri("/api/v1/tokens")
                .header("Authorization", "Bearer " + engine)
                .exchange()
                .expectStatus()
                .isForbidden()
                .expectHeader()
                .contentType(MediaType.APPLICATION_PROBLEM_JSON)
                .expectBody()
                .jsonPath("$.type")
                .isEqualTo("https://kvreuse.io/problems/forbidden");
    }

    @Test
    void operatorPollingAHostsOrdersThenForbidden() {
        // a poll claims the host's orders; only that host's agent may take them
        http.get()
                .uri("/api/v1/agents/any-host/orders")
                .header("Authorization", "Bearer " + tokens.operator())
                .exchange()
                .expectStatus()
                .isForbidden()
                .expectBody()
                .jsonPath("$.type")
                .isEqualTo("https://kvreuse.io/problems/forbidden");
    }

    @Test
    void revokedTokenStopsAuthenticating() {
        var minted = http.post()
                .uri("/api/v1/tokens")
                .header("Authorization", "Bearer " + tokens.operator())
                .contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("role", "OPERATOR", "subject", "temp-op"))
                .exchange()
                .expectStatus()
                .isCreated()
                .expectBody(Map.class)
                .returnResult()
                .getResponseBody();
        String secret = (String) minted.get("token");
        http.get()
                .uri("/api/v1/tokens")
                .header("Authorization", "Bearer " + secret)
                .exchange()
                .expectStatus()
                .isOk();
        http.delete()
                .uri("/api/v1/tokens/{id}", minted.get("tokenId"))
                .header("Authorization", "Bearer " + tokens.operator())
                .exchange()
                .expectStatus()
                .isNoContent();
        http.get()
                .uri("/api/v1/tokens")
                .header("Authorization", "Bearer " + secret)
                .exchange()
                .expectStatus()
                .isUnauthorized();
    }

    @Test
    void listNeverShowsSecrets() {
        String secret = mint("ROUTER");
        String body = http.get()
                .uri("/api/v1/tokens")
                .header("Authorization", "Bearer " + tokens.operator())
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody(String.class)
                .returnResult()
                .getResponseBody();
        assertThat(body).doesNotContain(secret).doesNotContain("token_hash");
    }

    @Test
    void mintWithUnknownRoleThenMalformed() {
        http.post()
                .uri("/api/v1/tokens")
                .header("Authorization", "Bearer " + tokens.operator())
                .contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"role\":\"ADMIN\",\"subject\":\"x\"}")
                .exchange()
                .expectStatus()
                .isBadRequest()
                .expectHeader()
                .contentType(MediaType.APPLICATION_PROBLEM_JSON)
                .expectBody()
                .jsonPath("$.type")
                .isEqualTo("https://kvreuse.io/problems/malformed-request")
                .jsonPath("$.detail")
                .value(d -> assertThat((String) d).contains("role").doesNotContain("io.kvreuse"));
    }

    private String mint(String role) {
        return tokens.mint(Role.valueOf(role));
    }
}
