package io.kvreuse.admin;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.security.Role;
import io.kvreuse.support.IntegrationTest;
import io.kvreuse.support.TestTokens;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;

/** A browser that opens an API link before signing in lands on the sign-in form; API clients keep their 401 problem. */
@IntegrationTest
class ApiSignInRedirectIntegrationTests {

    /** What Chromium sends when it navigates to a page. */
    private static final String BROWSER_ACCEPT =
            "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8";

    @Autowired
    WebTestClient http;

    @Autowired
    TestTokens tokens;

    @Test
    void browserOpeningAnApiLinkThenRedirectedToSignInWithANote() {
        for (String path : new String[] {"/api/v1/incarnations", "/api/v1/leases", "/actuator/prometheus"}) {
            http.get()
                    .uri(path)
                    .header("Accept", BROWSER_ACCEPT)
                    .exchange()
                    .expectStatus()
                    .isFound()
                    .expectHeader()
                    .location("/login?api");
        }
        AdminSession s = AdminSession.anonymous(http);
        assertThat(s.html("/login?api", HttpStatus.OK))
                .contains("id=\"api-note\"")
                .contains("Authorization: Bearer");
        // the note belongs to that redirect only: a plain visit of the form does not show it
        assertThat(s.html("/login", HttpStatus.OK)).doesNotContain("api-note").doesNotContain("Authorization: Bearer");
    }

    @Test
    void browserOpeningTheApiDocsThenSignsInAndComesBackToThem() {
        AdminSession s = AdminSession.anonymous(http);
        var first = s.get("/swagger-ui.html");
        assertThat(first.getStatus().value()).isEqualTo(302);
        assertThat(first.getResponseHeaders().getLocation()).hasToString("/login");

        var signedIn = s.submitLogin(tokens.mint(Role.OPERATOR));

        assertThat(signedIn.getStatus().is3xxRedirection()).isTrue();
        assertThat(signedIn.getResponseHeaders().getLocation()).hasToString("/swagger-ui.html");
        assertThat(s.get("/swagger-ui.html").getStatus().isError()).isFalse();
    }

    @Test
    void jsonClientWithoutTokenThenUnauthorizedProblemNotARedirect() {
        expectProblem(http.get().uri("/api/v1/incarnations").accept(MediaType.APPLICATION_JSON));
        expectProblem(http.get().uri("/api/v1/incarnations"));
        expectProblem(http.get().uri("/api/v1/incarnations").header("Accept", "*/*"));
        expectProblem(http.get().uri("/api/v1/incarnations").header("Accept", "text/html;q=0, application/json"));
        expectProblem(http.get().uri("/v3/api-docs").accept(MediaType.APPLICATION_JSON));
    }

    @Test
    void bearerTokenOrNonGetThenUnauthorizedProblemEvenFromABrowser() {
        expectProblem(http.get()
                .uri("/api/v1/incarnations")
                .header("Accept", BROWSER_ACCEPT)
                .header("Authorization", "Bearer kvr_not-a-token"));
        http.post()
                .uri("/api/v1/donor-selections")
                .header("Accept", BROWSER_ACCEPT)
                .contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{}")
                .exchange()
                .expectStatus()
                .isUnauthorized()
                .expectHeader()
                .contentType(MediaType.APPLICATION_PROBLEM_JSON)
                .expectHeader()
                .doesNotExist("Location");
    }

    @Test
    void validBearerTokenWithBrowserAcceptStillGetsTheApi() {
        http.get()
                .uri("/api/v1/incarnations")
                .header("Accept", BROWSER_ACCEPT)
                .header("Authorization", "Bearer " + tokens.operator())
                .exchange()
                .expectStatus()
                .isOk();
    }

    private static void expectProblem(WebTestClient.RequestHeadersSpec<?> request) {
        request.exchange()
                .expectStatus()
                .isUnauthorized()
                .expectHeader()
                .contentType(MediaType.APPLICATION_PROBLEM_JSON)
                .expectHeader()
                .valueEquals("WWW-Authenticate", "Bearer")
                .expectHeader()
                .doesNotExist("Location")
                .expectBody()
                .jsonPath("$.type")
                .isEqualTo("https://kvreuse.io/problems/unauthorized")
                .jsonPath("$.status")
                .isEqualTo(401);
    }
}
