package io.kvreuse.security;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.support.IntegrationTest;
import io.kvreuse.support.TestTokens;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.MediaType;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.test.web.reactive.server.WebTestClient;

@IntegrationTest
class TokenApiIntegrationTests {

    @Autowired
    WebTestClient http;

    @Autowired
    TestTokens tokens;

    @Autowired
    DatabaseClient db;

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
    void listPagesOldestFirstWithANextCursorUntilTheLastPage() {
        List<UUID> minted = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            minted.add(UUID.fromString((String) http.post()
                    .uri("/api/v1/tokens")
                    .header("Authorization", "Bearer " + tokens.operator())
                    .contentType(MediaType.APPLICATION_JSON)
                    .bodyValue(Map.of("role", "ROUTER", "subject", "paged-" + i))
                    .exchange()
                    .expectStatus()
                    .isCreated()
                    .expectBody(Map.class)
                    .returnResult()
                    .getResponseBody()
                    .get("tokenId")));
        }
        List<UUID> mine = db.sql(
                        "SELECT token_id FROM api_token WHERE token_id = ANY(:ids) " + "ORDER BY created_at, token_id")
                .bind("ids", minted.toArray(UUID[]::new))
                .map(r -> r.get("token_id", UUID.class))
                .all()
                .collectList()
                .block();
        OffsetDateTime first = db.sql("SELECT created_at FROM api_token WHERE token_id = :id")
                .bind("id", mine.getFirst())
                .map(r -> r.get("created_at", OffsetDateTime.class))
                .one()
                .block();
        String cursor = new TokenCursor(first.minusNanos(1000), new UUID(0, 0)).encode();
        List<UUID> seen = new ArrayList<>();
        int pages = 0;
        while (cursor != null) {
            var page = page("?limit=2&cursor=" + cursor);
            pages++;
            List<UUID> ids = ids(page.getResponseBody());
            assertThat(ids).hasSizeLessThanOrEqualTo(2);
            seen.addAll(ids);
            assertThat(page.getResponseBody()).doesNotContain("token_hash").doesNotContain("kvr_");
            cursor = page.getResponseHeaders().getFirst("X-Next-Cursor");
            if (cursor == null) {
                assertThat(page.getResponseHeaders().containsHeader("Link")).isFalse();
            } else {
                assertThat(ids).hasSize(2);
                assertThat(page.getResponseHeaders().getFirst("Link"))
                        .isEqualTo("</api/v1/tokens?limit=2&cursor=" + cursor + ">; rel=\"next\"");
            }
        }
        assertThat(pages).isEqualTo(3);
        assertThat(seen).containsExactlyElementsOf(mine);
        // after the newest token: an empty page, and no cursor to follow
        var last =
                page("?limit=2&cursor=" + new TokenCursor(OffsetDateTime.now().plusDays(1), new UUID(0, 0)).encode());
        assertThat(ids(last.getResponseBody())).isEmpty();
        assertThat(last.getResponseHeaders().containsHeader("X-Next-Cursor")).isFalse();
        assertThat(last.getResponseHeaders().containsHeader("Link")).isFalse();
    }

    @Test
    void listWithoutLimitAnswersABoundedDefaultPage() {
        for (int i = 0; i < 101; i++) {
            mint("ROUTER");
        }
        var page = page("");
        assertThat(ids(page.getResponseBody())).hasSize(100);
        assertThat(page.getResponseHeaders().getFirst("X-Next-Cursor")).isNotBlank();
    }

    @Test
    void listWithBadLimitOrCursorThenInvalidParameter() {
        for (String query : List.of(
                "?limit=0",
                "?limit=1001",
                "?limit=abc",
                "?cursor=nope",
                "?cursor=" + java.util.Base64.getUrlEncoder().encodeToString("12.not-a-uuid".getBytes()),
                "?cursor=")) {
            http.get()
                    .uri("/api/v1/tokens" + query)
                    .header("Authorization", "Bearer " + tokens.operator())
                    .exchange()
                    .expectStatus()
                    .isBadRequest()
                    .expectHeader()
                    .contentType(MediaType.APPLICATION_PROBLEM_JSON)
                    .expectBody()
                    .jsonPath("$.type")
                    .isEqualTo("https://kvreuse.io/problems/invalid-parameter");
        }
    }

    private org.springframework.test.web.reactive.server.EntityExchangeResult<String> page(String query) {
        return http.get()
                .uri("/api/v1/tokens" + query)
                .header("Authorization", "Bearer " + tokens.operator())
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody(String.class)
                .returnResult();
    }

    private static List<UUID> ids(String json) {
        List<UUID> ids = new ArrayList<>();
        tools.jackson.databind.json.JsonMapper.builder()
                .build()
                .readTree(json)
                .forEach(t -> ids.add(UUID.fromString(t.get("tokenId").asString())));
        return ids;
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
