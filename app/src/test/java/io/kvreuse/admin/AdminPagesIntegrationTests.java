package io.kvreuse.admin;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.security.Role;
import io.kvreuse.support.Fleet;
import io.kvreuse.support.IntegrationTest;
import io.kvreuse.support.TestTokens;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.util.LinkedMultiValueMap;
import org.springframework.util.MultiValueMap;

@IntegrationTest
class AdminPagesIntegrationTests {

    @Autowired
    WebTestClient http;

    @Autowired
    TestTokens tokens;

    @Autowired
    MetricsSampler sampler;

    @Autowired
    io.kvreuse.audit.AuditTrail audit;

    Fleet fleet;
    AdminSession admin;
    String subject;

    @BeforeEach
    void signIn() {
        fleet = new Fleet(http, tokens);
        subject = "ops-" + UUID.randomUUID();
        admin = AdminSession.signIn(http, tokens.mint(Role.OPERATOR, subject));
    }

    @Test
    void everyPageRendersForAnOperator() {
        String domain = fleet.domain(2, "GPU_CUDA_IPC");
        Fleet.Engine decode = fleet.ready("DECODE", domain, 2, Fleet.host());
        String bank = fleet.bank(decode, 2, 64);
        fleet.storeChain(decode, bank, 2, Fleet.chain(3), 0, new long[] {1, 1});

        assertThat(admin.html("/admin", HttpStatus.OK)).contains("Incarnations").contains("Reuse");
        assertThat(admin.html("/admin/domains", HttpStatus.OK)).contains(domain.substring(0, 11));
        assertThat(admin.html("/admin/domains/" + domain, HttpStatus.OK))
                .contains(domain)
                .contains("Revoke");
        assertThat(admin.html("/admin/domains/new", HttpStatus.OK)).contains("Certify");
        assertThat(admin.html("/admin/incarnations?hostId=" + decode.hostId(), HttpStatus.OK))
                .contains(decode.id().substring(0, 8))
                .contains("READY");
        assertThat(admin.html("/admin/incarnations/" + decode.id(), HttpStatus.OK))
                .contains(decode.id())
                .contains("REGISTERED → READY")
                .contains(bank.substring(0, 8));
        assertThat(admin.html("/admin/banks", HttpStatus.OK)).contains(bank.substring(0, 8));
        String bankPage = admin.html("/admin/banks/" + bank, HttpStatus.OK);
        assertThat(bankPage).contains("bank-parts").contains("PUBLISHED");
        assertThat(admin.html("/admin/leases", HttpStatus.OK)).contains("Leases");
        assertThat(admin.html("/admin/settings", HttpStatus.OK)).contains("Max donor candidates");
        assertThat(admin.html("/admin/audit?subject=" + decode.id(), HttpStatus.OK))
                .contains("TRANSITION");
    }

    @Test
    void incarnationsFilterByStateRoleDomainAndHost() {
        String domain = fleet.domain(1, "GPU_CUDA_IPC");
        String host = Fleet.host();
        Fleet.Engine ready = fleet.ready("DECODE", domain, 1, host);
        Fleet.Engine registered = fleet.register("PREFILL", domain, 1, host);

        String readyOnly = admin.html("/admin/incarnations?state=READY&hostId=" + host, HttpStatus.OK);
        assertThat(readyOnly)
                .contains(ready.id().substring(0, 8))
                .doesNotContain(registered.id().substring(0, 8));
        String prefill = admin.html("/admin/incarnations?role=PREFILL&domainId=" + domain, HttpStatus.OK);
        assertThat(prefill)
                .contains(registered.id().substring(0, 8))
                .doesNotContain(ready.id().substring(0, 8));
    }

    @Test
    void certifyThroughTheFormShowsValidationMessagesThenCertifies() {
        MultiValueMap<String, String> form = certifyForm("ui-model-" + UUID.randomUUID());
        form.set("numLayers", "abc");
        form.set("modelRevision", "");

        var invalid = admin.submit("/admin/domains/new", "/admin/domains", form);

        assertThat(invalid.getStatus().value()).isEqualTo(400);
        String page = AdminSession.body(invalid);
        assertThat(page).contains("data-field=\"numLayers\">must be a whole number");
        assertThat(page).contains("data-field=\"modelRevision\">");
        assertThat(page).contains("value=\"abc\"");

        form.set("numLayers", "32");
        form.set("modelRevision", "r1");
        form.set("tpSize", "3");
        var refused = admin.submit("/admin/domains/new", "/admin/domains", form);
        assertThat(refused.getStatus().value()).isEqualTo(422);
        assertThat(AdminSession.body(refused)).contains("tp-must-divide-kv-heads");

        form.set("tpSize", "2");
        form.set("extra", "headPartition=split\nnote = from the dashboard");
        var ok = admin.submit("/admin/domains/new", "/admin/domains", form);
        assertThat(ok.getStatus().is3xxRedirection()).isTrue();
        String location = ok.getResponseHeaders().getLocation().toString();
        assertThat(location).startsWith("/admin/domains/ld-").endsWith("?certified");
        String domainId = location.substring("/admin/domains/".length(), location.indexOf('?'));

        Map<String, Object> viaApi = fleet.get("/api/v1/domains/" + domainId, tokens.operator());
        assertThat(viaApi.get("status")).isEqualTo("CERTIFIED");
        assertThat(viaApi.get("certifiedBy")).isEqualTo("operator:" + subject);
        assertThat(viaApi.get("extra")).isEqualTo(Map.of("headPartition", "split", "note", "from the dashboard"));

        var again = admin.submit("/admin/domains/new", "/admin/domains", form);
        assertThat(again.getResponseHeaders().getLocation()).hasToString("/admin/domains/" + domainId + "?same");
    }

    @Test
    void revokeNeedsAReasonAndIsAuditedWithTheOperator() {
        String domain = fleet.domain(1, "GPU_CUDA_IPC");
        var blank =
                admin.submit("/admin/domains/" + domain, "/admin/domains/" + domain + "/revoke", form("reason", " "));
        assertThat(blank.getStatus().value()).isEqualTo(400);
        assertThat(AdminSession.body(blank)).contains("A reason");
        assertThat(fleet.get("/api/v1/domains/" + domain, tokens.operator()).get("status"))
                .isEqualTo("CERTIFIED");

        var done = admin.submit(
                "/admin/domains/" + domain, "/admin/domains/" + domain + "/revoke", form("reason", "layout drift"));
        assertThat(done.getResponseHeaders().getLocation())
                .as(done.getStatus() + AdminSession.body(done))
                .hasToString("/admin/domains/" + domain + "?revoked");
        Map<String, Object> revoked = fleet.get("/api/v1/domains/" + domain, tokens.operator());
        assertThat(revoked.get("status")).isEqualTo("REVOKED");
        assertThat(revoked.get("revokedBy")).isEqualTo("operator:" + subject);
        assertThat(admin.html("/admin/audit?subject=" + domain, HttpStatus.OK))
                .contains("DOMAIN_REVOKED")
                .contains("layout drift");
    }

    @Test
    void settingsEditIsValidatedAndAuditedWithTheOperator() {
        Map<String, Object> before = fleet.get("/api/v1/settings/reuse", tokens.operator());
        MultiValueMap<String, String> form = settingsForm(before);
        form.set("minFetchBlocks", "999999");
        form.set("minGainRatio", "7");

        var invalid = admin.submit("/admin/settings", "/admin/settings", form);
        assertThat(invalid.getStatus().value()).isEqualTo(400);
        assertThat(AdminSession.body(invalid))
                .contains("data-field=\"minGainRatio\">must be between 0 and 1")
                .contains("must not exceed maxFetchBlocks");
        assertThat(fleet.get("/api/v1/settings/reuse", tokens.operator()).get("version"))
                .isEqualTo(before.get("version"));

        MultiValueMap<String, String> valid = settingsForm(before);
        int candidates = ((Number) before.get("maxDonorCandidates")).intValue() == 8 ? 9 : 8;
        valid.set("maxDonorCandidates", Integer.toString(candidates));
        valid.set("reason", "dashboard test");
        var saved = admin.submit("/admin/settings", "/admin/settings", valid);
        Map<String, Object> after = fleet.get("/api/v1/settings/reuse", tokens.operator());
        assertThat(saved.getResponseHeaders().getLocation())
                .hasToString("/admin/settings?saved=" + after.get("version"));
        assertThat(after.get("maxDonorCandidates")).isEqualTo(candidates);
        assertThat(after.get("updatedBy")).isEqualTo("operator:" + subject);

        // the same stale version again is a conflict, not a silent overwrite
        var stale = admin.submit("/admin/settings", "/admin/settings", valid);
        assertThat(stale.getStatus().value()).isEqualTo(409);
        assertThat(AdminSession.body(stale)).contains("changed by someone else");
    }

    @Test
    void badInputOnPagesGivesHtmlErrorsNeverProblemJson() {
        assertHtmlError(admin.get("/admin/incarnations?state=NOPE"), 400);
        assertHtmlError(admin.get("/admin/incarnations/not-a-uuid"), 400);
        assertHtmlError(admin.get("/admin/incarnations/" + UUID.randomUUID()), 404);
        assertHtmlError(admin.get("/admin/domains/ld-nope"), 404);
        assertHtmlError(admin.get("/admin/banks/" + UUID.randomUUID()), 404);
        assertHtmlError(admin.get("/admin/leases?state=NOPE"), 400);
        assertHtmlError(admin.get("/admin/leases/" + UUID.randomUUID()), 404);
        assertHtmlError(admin.get("/admin/audit?since=yesterday"), 400);
        assertHtmlError(admin.get("/admin/no-such-page"), 404);
        assertHtmlError(admin.get("/no-such-page"), 404);
    }

    @Test
    void apiClientsNeverGetHtml() {
        http.get()
                .uri("/api/v1/no-such-endpoint")
                .header("Authorization", "Bearer " + tokens.operator())
                .accept(MediaType.TEXT_HTML, MediaType.ALL)
                .exchange()
                .expectStatus()
                .isNotFound()
                .expectHeader()
                .contentType(MediaType.APPLICATION_PROBLEM_JSON);
        http.get()
                .uri("/no-such-page")
                .accept(MediaType.APPLICATION_JSON)
                .exchange()
                .expectStatus()
                .isNotFound()
                .expectHeader()
                .contentType(MediaType.APPLICATION_PROBLEM_JSON);
        var json = admin.getJson("/admin/api/no-such-thing");
        assertThat(json.getStatus().value()).isEqualTo(404);
        assertThat(json.getResponseHeaders().getContentType()).isEqualTo(MediaType.APPLICATION_PROBLEM_JSON);
    }

    @Test
    void overviewJsonHasCountsAndTimeSeries() {
        String domain = fleet.domain(1, "GPU_CUDA_IPC");
        fleet.ready("DECODE", domain, 1, Fleet.host());
        sampler.sample().block();
        sampler.sample().block();

        var result = admin.getJson("/admin/api/overview");

        assertThat(result.getStatus().value()).isEqualTo(200);
        String body = AdminSession.body(result);
        assertThat(body)
                .contains("\"reuseEnabled\"")
                .contains("\"READY\"")
                .contains("\"attention\"")
                .contains("\"hintsPerSec\"")
                .contains("\"t\":[");
        http.get()
                .uri("/admin/api/overview")
                .cookie(AdminSecurityConfiguration.SESSION_COOKIE, admin.cookie())
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody()
                .jsonPath("$.incarnations.READY")
                .value(n -> assertThat(((Number) n).longValue()).isPositive());
    }

    @Test
    void auditIsPaginatedByEventId() {
        String actor = "operator:pager-" + UUID.randomUUID();
        for (int i = 0; i < AuditPageController.PAGE + 5; i++) {
            audit.record(io.kvreuse.audit.AuditEntry.action(actor, "test", "subject-" + i, "PAGED"))
                    .block();
        }
        String first = admin.html("/admin/audit?actor=" + actor, HttpStatus.OK);
        var older = java.util.regex.Pattern.compile("id=\"older\" href=\"([^\"]+)\"")
                .matcher(first);
        assertThat(older.find()).as(first).isTrue();
        String next = admin.html(older.group(1).replace("&amp;", "&"), HttpStatus.OK);

        assertThat(rows(first)).isEqualTo(AuditPageController.PAGE);
        assertThat(first).contains("subject-54").doesNotContain("subject-4<");
        assertThat(rows(next)).isEqualTo(5);
        assertThat(next).contains("subject-0").doesNotContain("subject-54").contains("« Newest");
    }

    private static int rows(String page) {
        return page.split("<code>PAGED</code>", -1).length - 1;
    }

    private static void assertHtmlError(
            org.springframework.test.web.reactive.server.EntityExchangeResult<byte[]> r, int status) {
        assertThat(r.getStatus().value()).as(r.getUrl().toString()).isEqualTo(status);
        assertThat(r.getResponseHeaders().getContentType().isCompatibleWith(MediaType.TEXT_HTML))
                .as(r.getUrl() + " is HTML")
                .isTrue();
        String page = AdminSession.body(r);
        assertThat(page).contains("status-code").doesNotContain("\"type\"");
        assertThat(page.split("class=\"topbar\"", -1)).as("one top bar").hasSize(2);
    }

    private static MultiValueMap<String, String> form(String k, String v) {
        MultiValueMap<String, String> m = new LinkedMultiValueMap<>();
        m.add(k, v);
        return m;
    }

    static MultiValueMap<String, String> certifyForm(String modelId) {
        MultiValueMap<String, String> f = new LinkedMultiValueMap<>();
        Fleet.contract(1, "GPU_CUDA_IPC").forEach((k, v) -> f.add(k, String.valueOf(v)));
        f.set("modelId", modelId);
        return f;
    }

    static MultiValueMap<String, String> settingsForm(Map<String, Object> doc) {
        MultiValueMap<String, String> f = new LinkedMultiValueMap<>();
        doc.forEach((k, v) -> {
            if (!k.equals("updatedAt") && !k.equals("updatedBy") && !(v instanceof Boolean b && !b)) {
                f.add(k, String.valueOf(v));
            }
        });
        f.add("_enabled", "on");
        f.add("_allowMnnvl", "on");
        return f;
    }
}
