package io.kvreuse.admin;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.security.Role;
import io.kvreuse.support.IntegrationTest;
import io.kvreuse.support.TestTokens;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.util.LinkedMultiValueMap;

@IntegrationTest
class AdminSecurityIntegrationTests {

    @Autowired
    WebTestClient http;

    @Autowired
    TestTokens tokens;

    @Test
    void signInWithOperatorTokenThenDashboardInANewSession() {
        AdminSession anonymous = AdminSession.anonymous(http);
        anonymous.csrfFrom("/login");
        String before = anonymous.cookie();
        String operator = tokens.mint(Role.OPERATOR);

        var result = anonymous.submitLogin(operator);

        assertThat(result.getStatus().is3xxRedirection()).isTrue();
        assertThat(result.getResponseHeaders().getLocation()).hasToString("/admin");
        // the session id changes at sign-in (no session fixation)
        assertThat(anonymous.cookie()).isNotNull().isNotEqualTo(before);
        assertThat(anonymous.html("/admin", HttpStatus.OK)).contains("Overview").contains("Sign out");
        var cookie = result.getResponseCookies().getFirst(AdminSecurityConfiguration.SESSION_COOKIE);
        assertThat(cookie.isHttpOnly()).isTrue();
        assertThat(cookie.getSameSite()).isEqualTo("Lax");
    }

    @Test
    void signInWithEngineOrRouterTokenThenRefusedWithClearMessage() {
        for (Role role : List.of(Role.ENGINE, Role.ROUTER, Role.AGENT)) {
            AdminSession s = AdminSession.anonymous(http);
            var result = s.submitLogin(tokens.mint(role));

            assertThat(result.getStatus().value()).isEqualTo(303);
            String location = result.getResponseHeaders().getLocation().toString();
            assertThat(location).startsWith("/login?error=");
            assertThat(s.html(location, HttpStatus.OK))
                    .contains("valid " + role.name() + " token, but only OPERATOR tokens can sign in");
            assertThat(s.get("/admin").getStatus().value()).isEqualTo(302);
            assertThat(s.get("/admin").getResponseHeaders().getLocation()).hasToString("/login");
        }
    }

    @Test
    void signInWithUnknownTokenThenRefused() {
        AdminSession s = AdminSession.anonymous(http);
        var result = s.submitLogin("kvr_not-a-token");
        String location = result.getResponseHeaders().getLocation().toString();
        assertThat(location).isEqualTo("/login?error=invalid");
        assertThat(s.html(location, HttpStatus.OK)).contains("Unknown or revoked token");
        assertThat(s.get("/admin/settings").getStatus().value()).isEqualTo(302);
    }

    @Test
    void dashboardWithoutSessionRedirectsToSignIn() {
        for (String path : List.of("/admin", "/admin/domains", "/admin/cleanup", "/admin/settings", "/admin/audit")) {
            http.get()
                    .uri(path)
                    .accept(MediaType.TEXT_HTML)
                    .exchange()
                    .expectStatus()
                    .isFound()
                    .expectHeader()
                    .location("/login");
        }
    }

    @Test
    void dashboardWithBearerTokensOfOtherRolesIsNotServed() {
        for (Role role : List.of(Role.ENGINE, Role.ROUTER)) {
            String token = tokens.mint(role);
            for (String path : List.of("/admin", "/admin/cleanup", "/admin/settings")) {
                http.get()
                        .uri(path)
                        .header("Authorization", "Bearer " + token)
                        .exchange()
                        .expectStatus()
                        .isFound()
                        .expectHeader()
                        .location("/login");
            }
            http.get()
                    .uri("/admin/api/overview")
                    .header("Authorization", "Bearer " + token)
                    .exchange()
                    .expectStatus()
                    .isUnauthorized();
        }
    }

    @Test
    void dashboardJsonWithoutSessionThenUnauthorizedProblem() {
        http.get()
                .uri("/admin/api/overview")
                .accept(MediaType.APPLICATION_JSON)
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
    void formPostWithoutCsrfThenForbiddenPageAndNothingChanged() {
        AdminSession s = AdminSession.signIn(http, tokens.mint(Role.OPERATOR));
        String settingsBefore = s.html("/admin/settings", HttpStatus.OK);
        var form = new LinkedMultiValueMap<String, String>();
        form.add("enabled", "true");
        form.add("minFetchBlocks", "1");

        var result = s.post("/admin/settings", form);

        assertThat(result.getStatus().value()).isEqualTo(403);
        assertThat(result.getResponseHeaders().getContentType().isCompatibleWith(MediaType.TEXT_HTML))
                .isTrue();
        assertThat(AdminSession.body(result)).contains("CSRF").contains("Nothing was changed");
        assertThat(version(s.html("/admin/settings", HttpStatus.OK))).isEqualTo(version(settingsBefore));
    }

    @Test
    void signInPostWithoutCsrfThenForbidden() {
        var form = new LinkedMultiValueMap<String, String>();
        form.add("token", tokens.operator());
        var result = AdminSession.anonymous(http).post("/login", form);
        assertThat(result.getStatus().value()).isEqualTo(403);
        assertThat(result.getResponseCookies().getFirst(AdminSecurityConfiguration.SESSION_COOKIE))
                .satisfiesAnyOf(
                        c -> assertThat(c).isNull(),
                        c -> assertThat(c.getValue()).isNotBlank());
    }

    @Test
    void signOutEndsTheSessionAndIsAudited() {
        String operator = tokens.mint(Role.OPERATOR, "ops-" + java.util.UUID.randomUUID());
        AdminSession s = AdminSession.signIn(http, operator);
        String oldCookie = s.cookie();

        var result = s.submit("/admin", "/logout", new LinkedMultiValueMap<>());

        assertThat(result.getStatus().is3xxRedirection()).isTrue();
        assertThat(result.getResponseHeaders().getLocation()).hasToString("/login?logout");
        http.get()
                .uri("/admin")
                .cookie(AdminSecurityConfiguration.SESSION_COOKIE, oldCookie)
                .exchange()
                .expectStatus()
                .isFound();
        String audit = AdminSession.signIn(http, tokens.operator()).html("/admin/audit", HttpStatus.OK);
        assertThat(audit).contains("UI_SIGNED_IN").contains("UI_SIGNED_OUT");
    }

    @Test
    void revokedTokenEndsItsSessions() {
        var minted = http.post()
                .uri("/api/v1/tokens")
                .header("Authorization", "Bearer " + tokens.operator())
                .contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("role", "OPERATOR", "subject", "temp-" + java.util.UUID.randomUUID()))
                .exchange()
                .expectStatus()
                .isCreated()
                .expectBody(Map.class)
                .returnResult()
                .getResponseBody();
        AdminSession s = AdminSession.signIn(http, (String) minted.get("token"));
        s.html("/admin/domains", HttpStatus.OK);

        http.delete()
                .uri("/api/v1/tokens/" + minted.get("tokenId"))
                .header("Authorization", "Bearer " + tokens.operator())
                .exchange()
                .expectStatus()
                .isNoContent();

        var after = s.get("/admin/domains");
        assertThat(after.getStatus().value()).isEqualTo(303);
        assertThat(after.getResponseHeaders().getLocation()).hasToString("/login?error=revoked");
        assertThat(s.get("/admin/domains").getStatus().value()).isEqualTo(302);
    }

    @Test
    void apiDocsReadableInAnOperatorSessionButApiStillNeedsBearer() {
        AdminSession s = AdminSession.signIn(http, tokens.mint(Role.OPERATOR));
        var docs = s.getJson("/v3/api-docs");
        assertThat(docs.getStatus().value()).isEqualTo(200);
        assertThat(AdminSession.body(docs)).contains("/api/v1/domains");
        assertThat(s.get("/swagger-ui.html").getStatus().is2xxSuccessful()
                        || s.get("/swagger-ui.html").getStatus().is3xxRedirection())
                .isTrue();
        // a cookie never authorises the API itself (it has no CSRF protection)
        assertThat(s.getJson("/api/v1/tokens").getStatus().value()).isEqualTo(401);
        http.get().uri("/v3/api-docs").exchange().expectStatus().isUnauthorized();
    }

    private static String version(String settingsPage) {
        var m = java.util.regex.Pattern.compile("id=\"settings-version\">(\\d+)<")
                .matcher(settingsPage);
        assertThat(m.find()).isTrue();
        return m.group(1);
    }
}
