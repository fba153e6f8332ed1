package io.kvreuse.admin;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.security.Role;
import io.kvreuse.support.IntegrationTest;
import io.kvreuse.support.TestTokens;
import java.util.UUID;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.HttpStatus;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.util.LinkedMultiValueMap;
import org.springframework.util.MultiValueMap;

/** The API-tokens pages' forms: the token rules hold, bad input changes nothing, the secret shows once. */
@IntegrationTest
class TokenPagesIntegrationTests {

    @Autowired
    WebTestClient http;

    @Autowired
    TestTokens tokens;

    @Autowired
    DatabaseClient db;

    AdminSession admin;
    String subject;

    @BeforeEach
    void signIn() {
        admin = AdminSession.signIn(http, tokens.mint(Role.OPERATOR));
        subject = "pages-" + UUID.randomUUID();
    }

    @Test
    void badMintFormsAreRefusedAndMintNothing() {
        assertRefused(form("KING", subject, "", ""), HttpStatus.BAD_REQUEST, "choose a role");
        assertRefused(form("ROUTER", "", "", ""), HttpStatus.BAD_REQUEST, "a subject of 1 to 200 characters");
        assertRefused(form("ROUTER", "x".repeat(201), "", ""), HttpStatus.BAD_REQUEST, "1 to 200 characters");
        assertRefused(form("AGENT", subject, "", ""), HttpStatus.BAD_REQUEST, "bound to one host");
        assertRefused(form("ROUTER", subject, "gpu-node-1", ""), HttpStatus.BAD_REQUEST, "only AGENT and ENGINE");
        assertRefused(form("AGENT", subject, " padded ", ""), HttpStatus.BAD_REQUEST, "without leading or trailing");
        assertRefused(form("ROUTER", subject, "", "d".repeat(1001)), HttpStatus.BAD_REQUEST, "at most 1000");
        assertThat(tokensOf(subject)).isZero();
        assertThat(admin.html("/admin/tokens?status=expired", HttpStatus.BAD_REQUEST))
                .contains("status must be one of active, revoked, all");
        assertThat(admin.html("/admin/tokens?role=KING", HttpStatus.BAD_REQUEST))
                .contains("role must be one of");
        assertThat(admin.html("/admin/tokens/" + UUID.randomUUID(), HttpStatus.NOT_FOUND))
                .contains("no token");
    }

    @Test
    void secretIsShownOnceThenNeverAgain() {
        var minted = admin.submit("/admin/tokens", "/admin/tokens", form("ENGINE", subject, "gpu-node-9", "e"));
        assertThat(minted.getStatus().is3xxRedirection()).isTrue();
        String location = minted.getResponseHeaders().getLocation().toString();
        assertThat(location).startsWith("/admin/tokens/");
        var first = admin.get(location);
        assertThat(first.getResponseHeaders().getCacheControl()).contains("no-store");
        String page = AdminSession.body(first);
        assertThat(page).contains("id=\"secret\"").contains("kvr_");
        String secret = page.replaceAll("(?s).*id=\"secret\">([^<]+)<.*", "$1");
        assertThat(secret).startsWith("kvr_");
        http.get()
                .uri("/api/v1/domains")
                .header("Authorization", "Bearer " + secret)
                .exchange()
                .expectStatus()
                .isOk();

        assertThat(admin.html(location, HttpStatus.OK)).doesNotContain(secret).doesNotContain("id=\"secret\"");
        assertThat(admin.html("/admin/tokens?status=all&subject=" + subject, HttpStatus.OK))
                .contains(subject)
                .doesNotContain(secret);
        assertThat(tokensOf(subject)).isEqualTo(1);
    }

    @Test
    void revokeNeedsTheSubjectTypedBackAndHappensOnce() {
        var minted = admin.submit("/admin/tokens", "/admin/tokens", form("ROUTER", subject, "", ""));
        String location = minted.getResponseHeaders().getLocation().toString();
        String revoke = location + "/revoke";
        MultiValueMap<String, String> wrong = new LinkedMultiValueMap<>();
        wrong.add("confirm", subject + "x");
        var refused = admin.submit(location, revoke, wrong);
        assertThat(refused.getStatus().value()).isEqualTo(422);
        assertThat(AdminSession.body(refused)).contains("Nothing was revoked");
        assertThat(activeTokensOf(subject)).isEqualTo(1);

        MultiValueMap<String, String> right = new LinkedMultiValueMap<>();
        right.add("confirm", subject);
        var done = admin.submit(location, revoke, right);
        assertThat(done.getStatus().is3xxRedirection()).isTrue();
        assertThat(activeTokensOf(subject)).isZero();
        assertThat(admin.html("/admin/tokens?subject=" + subject, HttpStatus.OK))
                .contains("No tokens match.")
                .doesNotContain("data-token=");

        MultiValueMap<String, String> again = new LinkedMultiValueMap<>();
        again.add("confirm", subject);
        again.add("_csrf", admin.csrfFrom("/admin/tokens"));
        var twice = admin.post(revoke, again);
        assertThat(twice.getStatus().value()).isEqualTo(409);
        assertThat(AdminSession.body(twice)).contains("already revoked");
    }

    @Test
    void aVisitorWhoIsNotSignedInIsSentToSignIn() {
        AdminSession engine = AdminSession.anonymous(http);
        var page = engine.get("/admin/tokens");
        assertThat(page.getStatus().is3xxRedirection()).isTrue();
        assertThat(page.getResponseHeaders().getLocation()).hasToString("/login");
        assertThat(AdminSession.body(page)).doesNotContain("Mint a token");
    }

    private void assertRefused(MultiValueMap<String, String> form, HttpStatus status, String message) {
        var r = admin.submit("/admin/tokens", "/admin/tokens", form);
        assertThat(r.getStatus().value()).as(form.toString()).isEqualTo(status.value());
        assertThat(AdminSession.body(r)).contains(message).contains("No token was minted");
    }

    private static MultiValueMap<String, String> form(String role, String subject, String host, String description) {
        MultiValueMap<String, String> f = new LinkedMultiValueMap<>();
        f.add("role", role);
        f.add("subject", subject);
        f.add("hostId", host);
        f.add("description", description);
        return f;
    }

    private long tokensOf(String subject) {
        return db.sql("SELECT count(*) AS n FROM api_token WHERE subject = :s")
                .bind("s", subject)
                .map((row, meta) -> row.get("n", Long.class))
                .one()
                .block();
    }

    private long activeTokensOf(String subject) {
        return db.sql("SELECT count(*) AS n FROM api_token WHERE subject = :s AND revoked_at IS NULL")
                .bind("s", subject)
                .map((row, meta) -> row.get("n", Long.class))
                .one()
                .block();
    }
}
