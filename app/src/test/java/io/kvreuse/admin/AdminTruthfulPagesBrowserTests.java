package io.kvreuse.admin;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.incarnation.LivenessSweeper;
import io.kvreuse.security.Role;
import io.kvreuse.support.Fleet;
import io.kvreuse.support.IntegrationTest;
import io.kvreuse.support.MutableClock;
import io.kvreuse.support.ReuseSettingsFixture;
import io.kvreuse.support.TestTokens;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.WebElement;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * What the dashboard says must be true: banners only right after the action they report, engines
 * by their stable names (ids on hover and on detail pages), settings in human units with a
 * confirmation naming any fleet-wide switch, and API links sending a browser to the sign-in form.
 */
@IntegrationTest
class AdminTruthfulPagesBrowserTests {

    private static final String[] NOTICES = {"notice-certified", "notice-same", "notice-revoked"};

    @LocalServerPort
    int port;

    @Autowired
    WebTestClient http;

    @Autowired
    TestTokens tokens;

    @Autowired
    MutableClock clock;

    @Autowired
    LivenessSweeper sweeper;

    AdminBrowser browser;
    Fleet fleet;
    ReuseSettingsFixture settings;

    @BeforeEach
    void start() throws IOException {
        browser = new AdminBrowser(port);
        fleet = new Fleet(http, tokens);
        settings = new ReuseSettingsFixture(http, tokens.operator());
    }

    @AfterEach
    void stop() throws IOException {
        settings.restore();
        browser.close();
    }

    @Test
    void domainBannersAppearOnlyRightAfterTheirAction() {
        browser.signIn(tokens.mint(Role.OPERATOR));
        String model = "truthful-model-" + UUID.randomUUID();

        certifyThroughTheForm(model);
        String domainId = browser.awaitId("domain-id").getText();
        assertThat(notices()).containsExactly("notice-certified");
        assertThat(browser.find("notice-certified").getText()).isEqualTo("Certified.");
        browser.shot("domain-certified");

        browser.open("/admin/domains/" + domainId);
        assertThat(notices()).isEmpty();
        assertThat(browser.all("main .alert")).isEmpty();
        browser.shot("domain-plain");

        certifyThroughTheForm(model);
        assertThat(browser.awaitId("domain-id").getText()).isEqualTo(domainId);
        assertThat(notices()).containsExactly("notice-same");

        browser.find("reason").sendKeys("truthful pages test");
        browser.click("#revoke-form button[type=submit]");
        browser.awaitId("notice-revoked");
        assertThat(notices()).containsExactly("notice-revoked");
        assertThat(browser.driver.findElement(By.tagName("main")).getText())
                .doesNotContain("Certified.")
                .doesNotContain("already certified");
        browser.shot("domain-revoked");

        // a plain load, and a stale link that still says "certified", announce nothing
        browser.open("/admin/domains/" + domainId);
        assertThat(notices()).isEmpty();
        browser.open("/admin/domains/" + domainId + "?certified");
        assertThat(notices()).isEmpty();
        assertThat(browser.all("main .alert")).isEmpty();
    }

    @Test
    void settingsShowHumanUnitsAndHelpAndSayGivenOnlyAfterASave() {
        settings.apply(doc -> {}); // remembered, restored after the test
        Map<String, Object> before = api();
        browser.signIn(tokens.mint(Role.OPERATOR));
        browser.open("/admin/settings");

        assertThat(browser.present("saved")).isFalse();
        assertThat(browser.value("maxFetchBytes")).matches("[0-9.]+ (B|KiB|MiB|GiB|TiB)");
        assertThat(browser.value("leaseTtlMs")).matches("[0-9.]+ (ms|s|min|h)");
        assertThat(browser.value("minGainRatio")).matches("[0-9.]+ %");
        String page = browser.driver.findElement(By.tagName("main")).getText();
        if (((Number) before.get("maxFetchBytes")).longValue() > 1_000_000) {
            assertThat(page).doesNotContain(String.valueOf(before.get("maxFetchBytes")));
        }
        for (String field : List.of(
                "enabled",
                "allowMnnvl",
                "minFetchBlocks",
                "maxFetchBlocks",
                "maxFetchBytes",
                "maxDonorCandidates",
                "minGainMs",
                "minGainRatio",
                "leaseTtlMs",
                "transferDeadlineMs",
                "abandonDeadlineMs",
                "maxInflightPerDonor",
                "maxInflightPerTarget")) {
            assertThat(browser.find(field + "-help").getText())
                    .as("help of " + field)
                    .hasSizeGreaterThan(20);
        }
        assertThat(browser.find("maxFetchBytes-help").getText()).contains("Default: 8 GiB.");
        browser.shot("settings-units");

        // bad input: a clear error next to each field, nothing saved
        browser.fill("maxFetchBytes", "lots of bytes");
        browser.fill("leaseTtlMs", "1 ms");
        browser.click("#settings-form button[type=submit]");
        browser.awaitId("form-errors");
        assertThat(browser.fieldError("maxFetchBytes")).contains("expected a size such as 8 GiB");
        assertThat(browser.fieldError("leaseTtlMs")).isEqualTo("must be between 100 ms and 10 min");
        assertThat(browser.present("saved")).isFalse();
        assertThat(api().get("version")).isEqualTo(before.get("version"));
        browser.shot("settings-unit-errors");

        boolean halfGiB = ((Number) before.get("maxFetchBytes")).longValue() == 512L << 20;
        browser.fill("maxFetchBytes", halfGiB ? "1 GiB" : "512 MiB");
        browser.fill("leaseTtlMs", "7.5 s");
        browser.fill("reason", "truthful settings test");
        browser.click("#settings-form button[type=submit]");
        browser.awaitId("saved");
        Map<String, Object> saved = api();
        assertThat(((Number) saved.get("maxFetchBytes")).longValue()).isEqualTo(halfGiB ? 1L << 30 : 512L << 20);
        assertThat(((Number) saved.get("leaseTtlMs")).longValue()).isEqualTo(7_500);
        assertThat(browser.find("saved").getText()).contains("version " + saved.get("version"));
        assertThat(browser.value("maxFetchBytes")).isEqualTo(halfGiB ? "1 GiB" : "512 MiB");
        assertThat(browser.value("leaseTtlMs")).isEqualTo("7.5 s");
        browser.shot("settings-saved");

        browser.open("/admin/settings");
        assertThat(browser.present("saved")).isFalse();
        long version = ((Number) saved.get("version")).longValue();
        browser.open("/admin/settings?saved=" + (version - 1));
        assertThat(browser.present("saved"))
                .as("an older save's link does not claim this version")
                .isFalse();
    }

    @Test
    void switchingReuseAsksAConfirmationNamingTheChangeAndSavesNothingUntilThen() {
        settings.apply(doc -> {});
        Map<String, Object> before = api();
        boolean wasOn = Boolean.TRUE.equals(before.get("enabled"));
        String question = wasOn ? "Turn reuse OFF for the whole fleet?" : "Turn reuse ON for the whole fleet?";
        browser.signIn(tokens.mint(Role.OPERATOR));

        browser.open("/admin/settings");
        browser.click("input[type=checkbox][name=enabled]");
        browser.fill("maxDonorCandidates", "7".equals(browser.value("maxDonorCandidates")) ? "6" : "7");
        browser.click("#settings-form button[type=submit]");
        assertThat(browser.awaitId("confirm-question").getText()).isEqualTo(question);
        assertThat(browser.find("confirm").getText()).isEqualTo(wasOn ? "Yes, turn reuse OFF" : "Yes, turn reuse ON");
        assertThat(row("enabled")).isEqualTo("Reuse " + (wasOn ? "ON OFF" : "OFF ON"));
        assertThat(row("maxDonorCandidates")).startsWith("Max donor candidates");
        assertThat(browser.all("#changes tr[data-field]")).hasSize(2);
        assertThat(api()).isEqualTo(before);
        browser.shot("settings-confirm");

        browser.click("#cancel");
        browser.awaitId("settings-form");
        assertThat(browser.present("saved")).isFalse();
        assertThat(api()).isEqualTo(before);

        browser.click("input[type=checkbox][name=enabled]");
        browser.click("#settings-form button[type=submit]");
        browser.awaitId("confirm-question");
        browser.click("#confirm");
        browser.awaitId("saved");
        assertThat(api().get("enabled")).isEqualTo(!wasOn);
        assertThat(browser.find("settings-updated-by").getText()).startsWith("operator:");
    }

    @Test
    void listsNameEnginesAndTheirHostsWithIdsOnHover() {
        settings.apply(s -> {
            ReuseSettingsFixture.permissive(s);
            s.put("leaseTtlMs", 60_000);
            s.put("transferDeadlineMs", 120_000);
            s.put("abandonDeadlineMs", 600_000);
        });
        String suffix = UUID.randomUUID().toString().substring(0, 6);
        String host = Fleet.host();
        String domain = fleet.domain(2, "GPU_CUDA_IPC");
        Fleet.Engine unnamed = fleet.ready("DECODE", domain, 2, host); // GPUs 0-1
        Fleet.Engine donor = named("DECODE", "decode-" + suffix, domain, host, 2);
        Fleet.Engine target = named("PREFILL", "prefill-" + suffix, domain, host, 4);
        String bank = fleet.bank(donor, 2, 64);
        long[] chain = Fleet.chain(8);
        fleet.storeChain(donor, bank, 2, chain, 0, new long[] {1, 1});
        String lease = propose(target, chain);
        browser.signIn(tokens.mint(Role.OPERATOR));

        browser.open("/admin/leases");
        WebElement row = browser.driver.findElement(By.xpath("//a[@href='/admin/leases/" + lease + "']/ancestor::tr"));
        List<WebElement> engines = row.findElements(By.cssSelector(".engine-name a"));
        assertThat(engines).extracting(WebElement::getText).containsExactly("decode-" + suffix, "prefill-" + suffix);
        assertThat(engines).extracting(e -> e.getDomAttribute("title")).containsExactly(donor.id(), target.id());
        assertThat(row.getText()).contains(host).doesNotContain(donor.id()).doesNotContain(shortId(donor.id()));
        browser.shot("leases-named");

        browser.open("/admin/leases/" + lease);
        assertThat(browser.find("lease-donor").getText())
                .contains("decode-" + suffix)
                .contains(host);
        assertThat(browser.find("lease-target").getText()).contains("prefill-" + suffix);
        browser.shot("lease-named");

        browser.open("/admin/incarnations?hostId=" + host);
        assertThat(nameCell(donor).getText()).isEqualTo("decode-" + suffix);
        assertThat(nameCell(donor).getDomAttribute("title")).isEqualTo(donor.id());
        assertThat(rowOf(donor).getText()).doesNotContain(donor.id()).doesNotContain(shortId(donor.id()));
        // no stable name: a short id, never the whole UUID as text
        assertThat(nameCell(unnamed).getText()).isEqualTo(shortId(unnamed.id())).isNotEqualTo(unnamed.id());
        assertThat(nameCell(unnamed).getDomAttribute("title")).isEqualTo(unnamed.id());
        browser.shot("incarnations-named");

        browser.open("/admin/banks");
        WebElement bankRow =
                browser.driver.findElement(By.xpath("//a[@href='/admin/banks/" + bank + "']/ancestor::tr"));
        assertThat(bankRow.findElement(By.cssSelector(".bank-owner")).getText())
                .contains("decode-" + suffix)
                .contains(host)
                .doesNotContain(donor.id());
        assertThat(bankRow.findElement(By.cssSelector(".bank-owner a")).getDomAttribute("title"))
                .isEqualTo(donor.id());
        browser.shot("banks-named");

        browser.open("/admin/banks/" + bank);
        assertThat(browser.find("bank-owner").getText())
                .contains("decode-" + suffix)
                .contains(host);
        browser.shot("bank-named");

        for (String page : List.of("/admin/audit?subject=" + donor.id(), "/admin/incarnations/" + donor.id())) {
            browser.open(page);
            List<WebElement> subjects = browser.all(".audit-subject");
            assertThat(subjects).as(page).isNotEmpty().allSatisfy(cell -> {
                assertThat(cell.getText()).contains("decode-" + suffix).doesNotContain(donor.id());
                assertThat(cell.findElement(By.tagName("a")).getDomAttribute("title"))
                        .isEqualTo(donor.id());
            });
        }
        browser.shot("incarnation-named");
        browser.open("/admin/audit?subject=" + unnamed.id());
        assertThat(browser.all(".audit-subject a"))
                .isNotEmpty()
                .allSatisfy(a -> assertThat(a.getText()).isEqualTo(shortId(unnamed.id())));
        browser.shot("audit-named");

        // the donor stops heartbeating: a cleanup candidate, by name, its full id there to be typed back
        clock.advance(Duration.ofSeconds(11));
        for (int i = 0; i < 40 && !sweeper.sweepOnce().block().ran(); i++) {
            io.kvreuse.support.LeaseWorld.sleep(50);
        }
        browser.open("/admin/cleanup");
        WebElement candidate = browser.find("candidate-" + donor.id());
        assertThat(candidate.findElement(By.cssSelector(".inc-name a")).getText())
                .isEqualTo("decode-" + suffix);
        assertThat(candidate.findElement(By.cssSelector(".inc-name a")).getDomAttribute("title"))
                .isEqualTo(donor.id());
        assertThat(candidate.findElement(By.cssSelector("code")).getText()).isEqualTo(donor.id());
        browser.shot("cleanup-named");
    }

    @Test
    void browserOpeningAnApiLinkLandsOnTheSignInForm() {
        browser.open("/login");
        assertThat(browser.present("api-note")).isFalse();

        browser.open("/api/v1/incarnations");
        assertThat(browser.path()).isEqualTo("/login");
        assertThat(browser.find("api-note").getText()).contains("Authorization: Bearer");
        assertThat(browser.driver.getPageSource()).doesNotContain("\"status\":401");
        browser.shot("login-from-api-link");

        browser.open("/swagger-ui.html");
        assertThat(browser.path()).isEqualTo("/login");
        assertThat(browser.present("api-note")).isFalse();
        browser.find("token").sendKeys(tokens.mint(Role.OPERATOR));
        browser.click("#login-form button");
        browser.wait.until(d -> d.getCurrentUrl().contains("swagger-ui"));
    }

    @Test
    void signedOutNoticeOnlyAfterSigningOut() {
        browser.open("/login");
        assertThat(browser.present("login-info")).isFalse();
        browser.signIn(tokens.mint(Role.OPERATOR));
        browser.click("form.signout button");
        assertThat(browser.awaitId("login-info").getText()).isEqualTo("You have signed out.");
        assertThat(browser.present("login-error")).isFalse();
        assertThat(browser.present("api-note")).isFalse();
        browser.shot("login-signed-out");
        browser.open("/login");
        assertThat(browser.present("login-info")).isFalse();
    }

    private void certifyThroughTheForm(String model) {
        browser.open("/admin/domains/new");
        browser.fill("modelId", model);
        browser.fill("modelRevision", "r1");
        browser.fill("tokenizerRevision", "t1");
        browser.fill("engine", "vllm");
        browser.fill("engineVersion", "0.11.0");
        browser.fill("dtype", "bfloat16");
        browser.fill("kvCacheDtype", "bfloat16");
        browser.fill("numLayers", "32");
        browser.fill("numKvHeads", "8");
        browser.fill("headDim", "128");
        browser.fill("attentionBackend", "FLASH_ATTN");
        browser.fill("blockSizeTokens", "16");
        browser.fill("hashFormat", "sha256-cbor-64:seed=0");
        browser.fill("bytesPerBlockPerRank", "1048576");
        browser.fill("tpSize", "2");
        browser.click("#certify-form button[type=submit]");
        browser.awaitId("domain-id");
    }

    private List<String> notices() {
        List<String> shown = new ArrayList<>();
        for (String id : NOTICES) {
            if (browser.present(id)) {
                shown.add(id);
            }
        }
        return shown;
    }

    private String row(String field) {
        return browser.driver
                .findElement(By.cssSelector("#changes tr[data-field='" + field + "']"))
                .getText();
    }

    private WebElement rowOf(Fleet.Engine e) {
        return browser.driver.findElement(By.cssSelector("tr[data-id='" + e.id() + "']"));
    }

    private WebElement nameCell(Fleet.Engine e) {
        return rowOf(e).findElement(By.cssSelector(".inc-name a"));
    }

    private static String shortId(String id) {
        return id.substring(0, 8) + "…";
    }

    private Map<String, Object> api() {
        Map<String, Object> doc = new LinkedHashMap<>(fleet.get("/api/v1/settings/reuse", tokens.operator()));
        doc.remove("updatedAt");
        return doc;
    }

    /** A READY engine registered under a stable name, as a pod would be, on GPUs {@code firstGpu..+1}. */
    private Fleet.Engine named(String role, String name, String domain, String host, int firstGpu) {
        String token = tokens.mint(Role.ENGINE);
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("stableName", name);
        body.put("role", role);
        body.put("domainId", domain);
        body.put("hostId", host);
        body.put("controlEndpoint", "tcp://" + host + ":5557");
        body.put("capabilities", List.of("kv.fetch_gpu@1.0", "kv.fetch@1.0"));
        body.put(
                "ranks",
                List.of(
                        Map.of("rank", 0, "gpuOrdinal", firstGpu, "gpuUuid", "GPU-" + UUID.randomUUID()),
                        Map.of("rank", 1, "gpuOrdinal", firstGpu + 1, "gpuUuid", "GPU-" + UUID.randomUUID())));
        String id =
                (String) fleet.post("/api/v1/incarnations", token, body, 201).get("incarnationId");
        Fleet.Engine e = new Fleet.Engine(id, token, host, domain);
        fleet.heartbeat(e);
        return e;
    }

    private String propose(Fleet.Engine target, long[] chain) {
        List<String> hashes =
                java.util.Arrays.stream(chain).mapToObj(Long::toUnsignedString).toList();
        String router = tokens.mint(Role.ROUTER);
        Map<String, Object> last = Map.of();
        for (int attempt = 0; attempt < 100; attempt++) {
            last = fleet.post(
                    "/api/v1/donor-selections",
                    router,
                    Map.of(
                            "requestId",
                            "req-" + UUID.randomUUID(),
                            "targetIncarnationId",
                            target.id(),
                            "seqHashes",
                            hashes,
                            "localPrefixBlocks",
                            0,
                            "deadlineMs",
                            2000),
                    200);
            if ("HINT".equals(last.get("decision"))) {
                return (String) last.get("leaseId");
            }
            io.kvreuse.support.LeaseWorld.sleep(50);
        }
        throw new AssertionError("no hint: " + last);
    }
}
