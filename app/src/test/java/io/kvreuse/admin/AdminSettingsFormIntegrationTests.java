package io.kvreuse.admin;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.security.Role;
import io.kvreuse.support.Fleet;
import io.kvreuse.support.IntegrationTest;
import io.kvreuse.support.ReuseSettingsFixture;
import io.kvreuse.support.TestTokens;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.util.MultiValueMap;

/** The settings form over HTTP: unreadable units and unconfirmed fleet-wide switches change nothing. */
@IntegrationTest
class AdminSettingsFormIntegrationTests {

    private static final Pattern CONFIRMATION = Pattern.compile("name=\"confirmation\" value=\"([^\"]*)\"");

    @Autowired
    WebTestClient http;

    @Autowired
    TestTokens tokens;

    Fleet fleet;
    ReuseSettingsFixture settings;
    AdminSession admin;

    @BeforeEach
    void signIn() {
        fleet = new Fleet(http, tokens);
        settings = new ReuseSettingsFixture(http, tokens.operator());
        settings.apply(doc -> {}); // remembered, restored after the test
        admin = AdminSession.signIn(http, tokens.mint(Role.OPERATOR));
    }

    @AfterEach
    void restore() {
        settings.restore();
    }

    @Test
    void unreadableUnitsThenBadRequestWithTheExpectedFormAndNothingSaved() {
        Map<String, Object> before = api();
        MultiValueMap<String, String> form = AdminPagesIntegrationTests.settingsForm(before);
        form.set("maxFetchBytes", "8 GiBs");
        form.set("transferDeadlineMs", "soon");
        form.set("minGainRatio", "10 ms");

        var refused = admin.submit("/admin/settings", "/admin/settings", form);

        assertThat(refused.getStatus().value()).isEqualTo(400);
        assertThat(AdminSession.body(refused))
                .contains("data-field=\"maxFetchBytes\">unknown unit &#39;GiBs&#39;")
                .contains("data-field=\"transferDeadlineMs\">expected a duration such as 250 ms")
                .contains("data-field=\"minGainRatio\">expected a share such as 10 %")
                .doesNotContain("id=\"saved\"");
        assertThat(api()).isEqualTo(before);
    }

    @Test
    void unitsAndBareNumbersSaveTheSameValues() {
        Map<String, Object> before = api();
        MultiValueMap<String, String> form = AdminPagesIntegrationTests.settingsForm(before);
        form.set("maxFetchBytes", "3 GiB");
        form.set("abandonDeadlineMs", "2 min");
        form.set("transferDeadlineMs", "15000");
        form.set("minGainRatio", "12.5 %");

        var saved = admin.submit("/admin/settings", "/admin/settings", form);

        assertThat(saved.getStatus().value()).isEqualTo(303);
        Map<String, Object> after = api();
        assertThat(((Number) after.get("maxFetchBytes")).longValue()).isEqualTo(3L << 30);
        assertThat(((Number) after.get("abandonDeadlineMs")).longValue()).isEqualTo(120_000);
        assertThat(((Number) after.get("transferDeadlineMs")).longValue()).isEqualTo(15_000);
        assertThat(((Number) after.get("minGainRatio")).doubleValue()).isEqualTo(0.125);
        assertThat(saved.getResponseHeaders().getLocation())
                .hasToString("/admin/settings?saved=" + after.get("version"));
    }

    @Test
    void fleetWideSwitchIsSavedOnlyWithTheConfirmationOfThatVeryChange() {
        Map<String, Object> before = api();
        boolean wasOn = Boolean.TRUE.equals(before.get("enabled"));
        MultiValueMap<String, String> form = toggled(before);

        var asked = admin.submit("/admin/settings", "/admin/settings", form);
        assertThat(asked.getStatus().value()).isEqualTo(200);
        String page = AdminSession.body(asked);
        assertThat(page).contains(wasOn ? "Turn reuse OFF for the whole fleet?" : "Turn reuse ON for the whole fleet?");
        assertThat(api()).isEqualTo(before);
        String confirmation = confirmation(page);

        // a confirmation of some other change does not apply this one
        form.set("confirmation", "v" + before.get("version") + ":enabled=" + (wasOn ? "ON" : "OFF"));
        var forged = admin.submit("/admin/settings", "/admin/settings", form);
        assertThat(forged.getStatus().value()).isEqualTo(200);
        assertThat(AdminSession.body(forged)).contains("id=\"confirm-question\"");
        assertThat(api()).isEqualTo(before);

        form.set("confirmation", confirmation);
        var confirmed = admin.submit("/admin/settings", "/admin/settings", form);
        assertThat(confirmed.getStatus().value()).isEqualTo(303);
        assertThat(api().get("enabled")).isEqualTo(!wasOn);
    }

    @Test
    void confirmationAfterSomeoneElseSavedThenConflictAndNothingOverwritten() {
        Map<String, Object> before = api();
        MultiValueMap<String, String> form = toggled(before);
        var asked = admin.submit("/admin/settings", "/admin/settings", form);
        form.set("confirmation", confirmation(AdminSession.body(asked)));

        settings.apply(doc -> doc.put("maxDonorCandidates", 5)); // another operator, through the API
        Map<String, Object> theirs = api();
        var late = admin.submit("/admin/settings", "/admin/settings", form);

        assertThat(late.getStatus().value()).isEqualTo(409);
        assertThat(AdminSession.body(late)).contains("changed by someone else");
        assertThat(api()).isEqualTo(theirs);
        assertThat(theirs.get("enabled")).isEqualTo(before.get("enabled"));
    }

    private static MultiValueMap<String, String> toggled(Map<String, Object> doc) {
        MultiValueMap<String, String> form = AdminPagesIntegrationTests.settingsForm(doc);
        if (Boolean.TRUE.equals(doc.get("enabled"))) {
            form.remove("enabled");
        } else {
            form.set("enabled", "true");
        }
        return form;
    }

    private static String confirmation(String page) {
        Matcher m = CONFIRMATION.matcher(page);
        assertThat(m.find()).as("a confirmation field").isTrue();
        return m.group(1);
    }

    private Map<String, Object> api() {
        Map<String, Object> doc = new java.util.LinkedHashMap<>(fleet.get("/api/v1/settings/reuse", tokens.operator()));
        doc.remove("updatedAt");
        return doc;
    }
}
