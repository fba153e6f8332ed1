package io.kvreuse.admin;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.security.Role;
import io.kvreuse.support.Fleet;
import io.kvreuse.support.IntegrationTest;
import io.kvreuse.support.LeaseWorld;
import io.kvreuse.support.MutableClock;
import io.kvreuse.support.TestTokens;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.Select;
import org.openqa.selenium.support.ui.WebDriverWait;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * The overview's headline, the node-agents pages and the API-tokens pages in Debian's Chromium,
 * headless at 1440×900; every page is screenshotted under {@code target/screenshots/}.
 */
@IntegrationTest
class AdminOverviewAgentsTokensBrowserTests {

    private static final Path SCREENSHOTS = Path.of("target/screenshots");

    @LocalServerPort
    int port;

    @Autowired
    WebTestClient http;

    @Autowired
    TestTokens tokens;

    @Autowired
    MutableClock clock;

    @Autowired
    MetricsSampler sampler;

    @Autowired
    DatabaseClient db;

    WebDriver browser;
    WebDriverWait wait;
    Path profile;
    Fleet fleet;

    @BeforeEach
    void startBrowser() throws IOException {
        profile = Files.createTempDirectory("kvreuse-chromium-");
        browser = AdminBrowser.chromium(profile);
        wait = new WebDriverWait(browser, Duration.ofSeconds(10));
        fleet = new Fleet(http, tokens);
        Files.createDirectories(SCREENSHOTS);
    }

    @AfterEach
    void stopBrowser() throws IOException {
        if (browser != null) {
            browser.quit();
        }
        if (profile != null) {
            AdminBrowser.deleteProfile(profile);
        }
    }

    @Test
    void overviewHeadlineShowsTheChosenWindowAndNothingFromOutsideIt() {
        String domain = fleet.domain(1, "GPU_CUDA_IPC");
        String host = Fleet.host();
        Fleet.Engine donor = fleet.ready("DECODE", domain, 1, host);
        Fleet.Engine target = fleet.ready("PREFILL", domain, 1, host);
        HeadlineRows rows = new HeadlineRows(db, domain, donor, target, fleet.bank(donor, 1, 64));
        // an hour of the past nothing else writes to
        Instant from = Instant.parse("2002-01-01T00:00:00Z")
                .plus(Duration.ofHours(ThreadLocalRandom.current().nextLong(24 * 365 * 20)));
        Instant end = from.plus(Duration.ofHours(1));
        // minute 10: a committed lease, 4 blocks of 16 tokens, measured (predicted 80 ms, realised 70 ms)
        UUID early = rows.lease(from.plus(Duration.ofMinutes(10)), "RELEASED", "COMMITTED", 4, 4, 100, 20);
        UUID order = rows.order(early);
        rows.part(order, 0, "DONE", 3 * 1024 * 1024, 30_000, from.plus(Duration.ofMinutes(11)));
        // minute 50: answers only (the last 15 minutes see these and nothing of minute 10)
        rows.answers(from.plus(Duration.ofMinutes(10)), "HINT", "NONE", 1, 64);
        rows.answers(from.plus(Duration.ofMinutes(50)), "NO_HINT", "NO_COVERAGE", 3, 300);
        rows.answers(from.plus(Duration.ofMinutes(50)), "HINT", "NONE", 1, 100);
        // after the end: never shown
        rows.answers(end.plus(Duration.ofMinutes(1)), "HINT", "NONE", 1_000, 1_000_000);

        signIn(tokens.mint(Role.OPERATOR));
        sampler.sample().block();
        sampler.sample().block();
        open("/admin?window=1h&until=" + end);
        assertThat(text("headline-window")).contains("the hour ending");
        assertThat(figure("hintRate")).isEqualTo("40.0 %");
        assertThat(figure("answers")).isEqualTo("2 hints of 5 answers");
        assertThat(figure("reusedTokens")).isEqualTo("64");
        assertThat(figure("computedTokens")).isEqualTo("400");
        assertThat(figure("predictedSaved")).isEqualTo("80.0 ms");
        assertThat(figure("realisedSaved")).isEqualTo("70.0 ms");
        assertThat(figure("bytesMoved")).isEqualTo("3.0 MiB");
        assertThat(browser.findElement(By.id("headline")).getText())
                .doesNotContain("1,000")
                .doesNotContain("1,001");
        // the charts draw, each with its unit on the value axis
        wait.until(d -> d.findElements(By.cssSelector(".chart canvas")).size() == 4);
        wait.until(ExpectedConditions.textMatches(By.id("refreshed"), java.util.regex.Pattern.compile("updated")));
        // the refresh keeps the window: same figures after it
        assertThat(figure("hintRate")).isEqualTo("40.0 %");
        for (String id : List.of("chart-rate", "chart-latency", "chart-bytes", "chart-gain")) {
            String unit = browser.findElement(By.id(id)).getAttribute("data-unit");
            assertThat(unit).isNotBlank();
            assertAxisLabelsInside(id, unit);
        }
        shot("overview-headline");
        ((JavascriptExecutor) browser)
                .executeScript("document.getElementById('chart-rate').scrollIntoView({block: 'start'});");
        shot("overview-charts-rate-latency");
        ((JavascriptExecutor) browser)
                .executeScript("document.getElementById('chart-bytes').scrollIntoView({block: 'center'});");
        shot("overview-charts");

        browser.findElement(By.cssSelector("#windows a[data-window='15m']")).click();
        wait.until(ExpectedConditions.textToBe(By.id("headline-window"), "the 15 minutes ending " + time(end)));
        assertThat(figure("hintRate")).isEqualTo("25.0 %");
        assertThat(figure("answers")).isEqualTo("1 hint of 4 answers");
        // minute 10 lies outside the last 15 minutes: none of its figures
        assertThat(figure("reusedTokens")).isEqualTo("0");
        assertThat(figure("predictedSaved")).isEqualTo("—");
        assertThat(figure("bytesMoved")).isEqualTo("0 B");
        assertThat(browser.findElement(By.cssSelector("#windows a.active")).getText())
                .isEqualTo("15m");
        shot("overview-headline-15m");
    }

    @Test
    void agentsPageShowsHostsGpusNixlNamesLivenessAndOrdersInFlight() {
        LeaseWorld w = new LeaseWorld(http, tokens, 1, 3_000, 6_000, 20_000);
        try {
            String lease = w.propose();
            w.destination(lease, 0).expectStatus().isOk();
            w.pinAll(lease);
            String other = Fleet.host();
            w.registerAgent(tokens.mint(Role.AGENT, "agent-" + UUID.randomUUID(), other), other);
            signIn(tokens.mint(Role.OPERATOR));

            open("/admin/agents");
            WebElement row = wait.until(
                    ExpectedConditions.presenceOfElementLocated(By.cssSelector("tr[data-host='" + w.host + "']")));
            assertThat(row.findElement(By.cssSelector(".agent-state")).getText())
                    .isEqualTo("ONLINE");
            assertThat(row.findElement(By.cssSelector(".agent-gpus")).getText())
                    .contains("GPU 0 · agent-0")
                    .contains("GPU 3 · agent-3");
            assertThat(row.findElement(By.cssSelector(".agent-orders")).getText())
                    .startsWith("1");
            // NIXL metadata carries raw addresses: never on the page
            assertThat(browser.getPageSource()).doesNotContain("secret-md-").doesNotContain("c2VjcmV0LW1k");
            shot("agents");

            open("/admin/agents?hostId=" + w.host);
            assertThat(browser.findElements(By.cssSelector("#agents tr[data-host]")))
                    .hasSize(1);
            assertThat(browser.getPageSource()).doesNotContain("data-host=\"" + other + "\"");
            browser.findElement(By.linkText(w.host)).click();
            wait.until(ExpectedConditions.presenceOfElementLocated(By.id("agent-orders")));
            assertThat(text("agent-host")).isEqualTo(w.host);
            assertThat(browser.findElements(By.cssSelector("#agent-gpus tr[data-ordinal]")))
                    .hasSize(4);
            assertThat(browser.findElement(By.id("agent-orders")).getText()).contains(lease.substring(0, 8));
            assertThat(browser.getPageSource()).doesNotContain("secret-md-");
            shot("agent");

            // the other agent falls silent: SUSPECT on its row, while this one heartbeats on
            clock.advance(Duration.ofSeconds(16));
            w.fleet.post("/api/v1/agents/" + w.host + "/heartbeat", w.agentToken, java.util.Map.of(), 200);
            // the scheduled sweeper (every second, on the test clock) sees the silence
            wait.until(d -> {
                open("/admin/agents?state=SUSPECT&hostId=" + other);
                return !d.findElements(By.cssSelector("tr[data-host='" + other + "']"))
                        .isEmpty();
            });
            assertThat(browser.findElement(By.cssSelector("tr[data-host='" + other + "'] .agent-state"))
                            .getText())
                    .isEqualTo("SUSPECT");
            w.fleet.post("/api/v1/agents/" + w.host + "/heartbeat", w.agentToken, java.util.Map.of(), 200);
            open("/admin/agents?state=SUSPECT&hostId=" + w.host);
            assertThat(browser.findElements(By.cssSelector("#agents tr[data-host]")))
                    .isEmpty();
            open("/admin/agents?state=NAPPING");
            assertThat(browser.findElement(By.cssSelector(".status-code")).getText())
                    .isEqualTo("400");
        } finally {
            w.restore();
        }
    }

    @Test
    void operatorMintsATokenSeesTheSecretOnceAndRevokesItWithConfirmation() {
        signIn(tokens.mint(Role.OPERATOR));
        String subject = "agent-browser-" + UUID.randomUUID();
        String host = Fleet.host();
        open("/admin/tokens");
        shot("tokens");

        // an AGENT token without a host: refused by the token rules, nothing minted
        new Select(browser.findElement(By.id("role"))).selectByValue("AGENT");
        browser.findElement(By.id("subject")).sendKeys(subject);
        browser.findElement(By.id("mint-submit")).click();
        wait.until(ExpectedConditions.presenceOfElementLocated(By.id("mint-errors")));
        assertThat(fieldError("hostId")).contains("bound to one host");
        assertThat(browser.findElement(By.id("subject")).getAttribute("value")).isEqualTo(subject);
        shot("tokens-mint-error");
        open("/admin/tokens?status=all&subject=" + subject);
        assertThat(browser.findElements(By.cssSelector("#tokens tr[data-token]")))
                .isEmpty();

        open("/admin/tokens");
        new Select(browser.findElement(By.id("role"))).selectByValue("AGENT");
        browser.findElement(By.id("subject")).sendKeys(subject);
        browser.findElement(By.id("hostId")).sendKeys(host);
        browser.findElement(By.id("description")).sendKeys("node agent of the browser test");
        browser.findElement(By.id("mint-submit")).click();
        wait.until(ExpectedConditions.presenceOfElementLocated(By.id("secret")));
        String secret = text("secret");
        assertThat(secret).isNotBlank();
        String tokenId =
                browser.getCurrentUrl().substring(browser.getCurrentUrl().lastIndexOf('/') + 1);
        shot("token-minted");
        // the secret works: the agent registers its host with it
        http.post()
                .uri("/api/v1/agents")
                .header("Authorization", "Bearer " + secret)
                .contentType(org.springframework.http.MediaType.APPLICATION_JSON)
                .bodyValue(java.util.Map.of(
                        "hostId",
                        host,
                        "gpus",
                        List.of(java.util.Map.of("ordinal", 0, "uuid", "GPU-x")),
                        "nixlAgents",
                        List.of()))
                .exchange()
                .expectStatus()
                .isCreated();

        // shown once: a reload, or the page opened again, never shows it
        browser.navigate().refresh();
        wait.until(ExpectedConditions.presenceOfElementLocated(By.id("token-details")));
        assertThat(browser.findElements(By.id("secret"))).isEmpty();
        assertThat(browser.getPageSource()).doesNotContain(secret);
        open("/admin/tokens?subject=" + subject);
        assertThat(browser.getPageSource()).doesNotContain(secret);
        WebElement row = browser.findElement(By.cssSelector("tr[data-token='" + tokenId + "']"));
        assertThat(row.findElement(By.cssSelector(".token-status")).getText()).isEqualTo("ACTIVE");
        assertThat(row.getText()).contains("AGENT").contains(host);

        // revoking asks for the subject typed back
        row.findElement(By.cssSelector(".revoke-link")).click();
        wait.until(ExpectedConditions.presenceOfElementLocated(By.id("revoke-form")));
        browser.findElement(By.id("confirm")).sendKeys("not-the-subject");
        browser.findElement(By.id("revoke-submit")).click();
        wait.until(ExpectedConditions.presenceOfElementLocated(By.id("revoke-error")));
        assertThat(text("revoke-error")).contains("Nothing was revoked");
        assertThat(text("token-status")).isEqualTo("ACTIVE");
        shot("token-revoke-refused");
        browser.findElement(By.id("confirm")).clear();
        browser.findElement(By.id("confirm")).sendKeys(subject);
        browser.findElement(By.id("revoke-submit")).click();
        wait.until(ExpectedConditions.presenceOfElementLocated(By.id("revoked-notice")));
        assertThat(text("token-status")).isEqualTo("REVOKED");
        assertThat(browser.findElements(By.id("revoke-form"))).isEmpty();
        shot("token-revoked");
        http.get()
                .uri("/api/v1/agents/" + host)
                .header("Authorization", "Bearer " + secret)
                .exchange()
                .expectStatus()
                .isUnauthorized();

        // no longer listed as active; listed among the revoked
        open("/admin/tokens?subject=" + subject);
        assertThat(browser.findElements(By.cssSelector("tr[data-token='" + tokenId + "']")))
                .isEmpty();
        open("/admin/tokens?status=revoked&subject=" + subject);
        assertThat(browser.findElement(By.cssSelector("tr[data-token='" + tokenId + "'] .token-status"))
                        .getText())
                .isEqualTo("REVOKED");
        shot("tokens-revoked");
        browser.findElement(By.linkText(subject)).click();
        browser.findElement(By.id("token-audit")).click();
        wait.until(d -> d.getPageSource().contains("TOKEN_REVOKED"));
        assertThat(browser.getPageSource()).contains("TOKEN_MINTED").doesNotContain(secret);
    }

    @Test
    void mintWithoutCsrfTokenIsRefusedAndMintsNothing() {
        signIn(tokens.mint(Role.OPERATOR));
        String subject = "router-csrf-" + UUID.randomUUID();
        open("/admin/tokens");
        ((JavascriptExecutor) browser)
                .executeScript("document.querySelectorAll('input[name=_csrf]').forEach(e => e.remove());");
        new Select(browser.findElement(By.id("role"))).selectByValue("ROUTER");
        browser.findElement(By.id("subject")).sendKeys(subject);
        browser.findElement(By.id("mint-submit")).click();
        wait.until(ExpectedConditions.visibilityOfElementLocated(By.cssSelector(".status-code")));
        assertThat(browser.findElement(By.cssSelector(".status-code")).getText())
                .isEqualTo("403");
        open("/admin/tokens?status=all&subject=" + subject);
        assertThat(browser.findElements(By.cssSelector("#tokens tr[data-token]")))
                .isEmpty();
    }

    /**
     * The value axis of the chart names the unit and is wider than its widest tick label, measured
     * in the axis font: no label is cut off.
     */
    private void assertAxisLabelsInside(String chartId, String unit) {
        @SuppressWarnings("unchecked")
        java.util.Map<String, Object> axis =
                (java.util.Map<String, Object>) ((JavascriptExecutor) browser).executeScript("""
                        const u = window.kvreuseCharts[arguments[0]];
                        const a = u.axes[1];
                        const ctx = document.createElement('canvas').getContext('2d');
                        ctx.font = a.font[0] ? a.font[0] : a.font;
                        let widest = 0;
                        for (const v of a._values || []) widest = Math.max(widest, ctx.measureText(String(v)).width);
                        const box = u.root.getBoundingClientRect();
                        const card = u.root.parentElement.getBoundingClientRect();
                        return {label: a.label, size: a._size, widest: widest, ticks: (a._values || []).length,
                                inside: box.left >= card.left - 1 && box.right <= card.right + 1};
                        """, chartId);
        assertThat(axis.get("label")).isEqualTo(unit);
        assertThat(((Number) axis.get("size")).doubleValue())
                .as(chartId + " value axis wider than its widest label " + axis)
                .isGreaterThan(((Number) axis.get("widest")).doubleValue() + 10);
        assertThat(axis.get("inside")).as(chartId + " inside its card").isEqualTo(true);
    }

    private String figure(String name) {
        return browser.findElement(By.cssSelector("[data-headline='" + name + "']"))
                .getText();
    }

    private static String time(Instant t) {
        return java.time.format.DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss'Z'")
                .withZone(java.time.ZoneOffset.UTC)
                .format(t);
    }

    private String text(String id) {
        return browser.findElement(By.id(id)).getText();
    }

    private String fieldError(String field) {
        return browser.findElement(By.cssSelector(".field-error[data-field='" + field + "']"))
                .getText();
    }

    private void signIn(String token) {
        open("/login");
        browser.findElement(By.id("token")).sendKeys(token);
        browser.findElement(By.cssSelector("#login-form button")).click();
        wait.until(ExpectedConditions.urlMatches(".*/admin$"));
    }

    private void open(String path) {
        browser.get("http://localhost:" + port + path);
    }

    private void shot(String name) {
        File png = ((org.openqa.selenium.TakesScreenshot) browser).getScreenshotAs(OutputType.FILE);
        try {
            Files.copy(png.toPath(), SCREENSHOTS.resolve(name + ".png"), StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
