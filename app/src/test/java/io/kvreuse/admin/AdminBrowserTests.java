package io.kvreuse.admin;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.incarnation.LivenessSweeper;
import io.kvreuse.security.Role;
import io.kvreuse.support.Fleet;
import io.kvreuse.support.IntegrationTest;
import io.kvreuse.support.MutableClock;
import io.kvreuse.support.TestTokens;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.WebDriverWait;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.web.reactive.server.WebTestClient;

/** The dashboard in a real browser: Debian's Chromium, headless, driven by Selenium. */
@IntegrationTest
class AdminBrowserTests {

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
    LivenessSweeper sweeper;

    @Autowired
    MetricsSampler sampler;

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
    void operatorSignsInAndSeesTheOverview() {
        open("/admin");
        assertThat(browser.getCurrentUrl()).endsWith("/login");
        shot("login");
        signIn(tokens.mint(Role.OPERATOR));
        assertThat(browser.getCurrentUrl()).endsWith("/admin");
        sampler.sample().block();
        sampler.sample().block();
        // the charts fill in from the JSON endpoint
        wait.until(d -> d.findElements(By.cssSelector("#chart-rate canvas")).size() == 1);
        wait.until(ExpectedConditions.textMatches(By.id("refreshed"), java.util.regex.Pattern.compile("updated")));
        assertThat(browser.findElement(By.id("reuse-state")).getText()).startsWith("Reuse");
        shot("overview");
    }

    @Test
    void engineTokenIsRefusedAtSignIn() {
        open("/login");
        browser.findElement(By.id("token")).sendKeys(tokens.mint(Role.ENGINE));
        browser.findElement(By.cssSelector("#login-form button")).click();
        wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("login-error")));
        assertThat(browser.findElement(By.id("login-error")).getText())
                .contains("ENGINE token, but only OPERATOR tokens");
        shot("login-refused");
        open("/admin/settings");
        assertThat(browser.getCurrentUrl()).endsWith("/login");
    }

    @Test
    void incarnationGoesSuspectOnThePage() {
        String domain = fleet.domain(2, "GPU_CUDA_IPC");
        String host = Fleet.host();
        Fleet.Engine decode = fleet.ready("DECODE", domain, 2, host);
        String bank = fleet.bank(decode, 2, 128);
        fleet.storeChain(decode, bank, 2, Fleet.chain(6), 0, new long[] {1, 1});
        signIn(tokens.mint(Role.OPERATOR));

        open("/admin/incarnations?hostId=" + host);
        assertThat(stateOf(decode.id())).isEqualTo("READY");

        clock.advance(Duration.ofSeconds(11));
        sweeper.sweepOnce().block();
        browser.navigate().refresh();

        assertThat(stateOf(decode.id())).isEqualTo("SUSPECT");
        shot("incarnations");
        open("/admin/incarnations/" + decode.id());
        assertThat(browser.findElement(By.id("inc-state")).getText()).isEqualTo("SUSPECT");
        assertThat(browser.findElement(By.id("epoch-history")).getText()).contains("READY → SUSPECT");
        shot("incarnation");
        open("/admin/banks/" + bank);
        shot("bank");
        open("/admin/banks");
        shot("banks");
        open("/admin/cleanup");
        assertThat(browser.findElement(By.id("candidates")).getText()).contains(decode.id());
        shot("cleanup");
        open("/admin/leases");
        shot("leases");
        open("/admin/audit?subject=" + decode.id());
        shot("audit");
    }

    @Test
    void certifyADomainThroughTheFormAfterAValidationError() {
        signIn(tokens.mint(Role.OPERATOR));
        open("/admin/domains/new");
        String model = "browser-model-" + UUID.randomUUID();
        fill("modelId", model);
        fill("tokenizerRevision", "t1");
        fill("engine", "vllm");
        fill("engineVersion", "0.11.0");
        fill("dtype", "bfloat16");
        fill("kvCacheDtype", "bfloat16");
        fill("numLayers", "thirty-two");
        fill("numKvHeads", "8");
        fill("headDim", "128");
        fill("attentionBackend", "FLASH_ATTN");
        fill("blockSizeTokens", "16");
        fill("hashFormat", "sha256-cbor-64:seed=0");
        fill("bytesPerBlockPerRank", "1048576");
        fill("tpSize", "2");
        browser.findElement(By.cssSelector("#certify-form button[type=submit]")).click();

        wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("form-errors")));
        assertThat(fieldError("numLayers")).isEqualTo("must be a whole number");
        assertThat(fieldError("modelRevision")).isNotBlank();
        assertThat(browser.findElement(By.id("modelId")).getAttribute("value")).isEqualTo(model);
        shot("domain-new-errors");

        fill("numLayers", "32");
        fill("modelRevision", "r1");
        browser.findElement(By.cssSelector("#certify-form button[type=submit]")).click();

        wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("domain-id")));
        String domainId = browser.findElement(By.id("domain-id")).getText();
        assertThat(domainId).startsWith("ld-");
        assertThat(browser.findElement(By.id("contract")).getText()).contains(model);
        shot("domain");
        open("/admin/domains");
        assertThat(browser.findElement(By.id("domains")).getText()).contains(model);
        shot("domains");
    }

    @Test
    void editASettingAndSeeItAudited() {
        signIn(tokens.mint(Role.OPERATOR));
        open("/admin/settings");
        WebElement candidates = browser.findElement(By.id("maxDonorCandidates"));
        int next = "8".equals(candidates.getAttribute("value")) ? 9 : 8;
        fill("maxDonorCandidates", "0");
        browser.findElement(By.cssSelector("#settings-form button[type=submit]"))
                .click();
        wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("form-errors")));
        assertThat(fieldError("maxDonorCandidates")).contains("between 1 and 256");
        shot("settings-errors");

        fill("maxDonorCandidates", Integer.toString(next));
        fill("reason", "browser test");
        browser.findElement(By.cssSelector("#settings-form button[type=submit]"))
                .click();
        wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("saved")));
        assertThat(browser.findElement(By.id("maxDonorCandidates")).getAttribute("value"))
                .isEqualTo(Integer.toString(next));
        assertThat(browser.findElement(By.id("settings-updated-by")).getText()).startsWith("operator:");
        shot("settings");
        open("/admin/audit?subject=reuse");
        assertThat(browser.findElement(By.cssSelector("table.audit")).getText())
                .contains("SETTINGS_CHANGED")
                .contains("browser test");
    }

    @Test
    void formWithoutCsrfTokenIsRefused() {
        signIn(tokens.mint(Role.OPERATOR));
        open("/admin/settings");
        String version = browser.findElement(By.id("settings-version")).getText();
        ((JavascriptExecutor) browser)
                .executeScript("document.querySelectorAll('input[name=_csrf]').forEach(e => e.remove());");
        fill("maxDonorCandidates", "17");
        browser.findElement(By.cssSelector("#settings-form button[type=submit]"))
                .click();

        wait.until(ExpectedConditions.visibilityOfElementLocated(By.cssSelector(".status-code")));
        assertThat(browser.findElement(By.cssSelector(".status-code")).getText())
                .isEqualTo("403");
        assertThat(browser.getPageSource()).contains("CSRF").contains("Nothing was changed");
        shot("error-403");
        open("/admin/settings");
        assertThat(browser.findElement(By.id("settings-version")).getText()).isEqualTo(version);
        open("/admin/incarnations/" + UUID.randomUUID());
        assertThat(browser.findElement(By.cssSelector(".status-code")).getText())
                .isEqualTo("404");
        shot("error-404");
    }

    @Autowired
    io.kvreuse.lease.LeaseSweeper leaseSweeper;

    @Test
    void operatorCleansUpADeadDonorWithTypedConfirmationThenItsStableNameIsFree() {
        io.kvreuse.support.LeaseWorld w = new io.kvreuse.support.LeaseWorld(http, tokens, 2, 3_000, 6_000, 20_000);
        try {
            // a transfer that passed its deadline: UNCERTAIN, its pins held
            String lease = w.propose();
            w.destination(lease, 0).expectStatus().isOk();
            w.pinAll(lease);
            assertThat(w.orders(w.agentToken, w.host, 2000)).hasSize(1);
            clock.advance(Duration.ofMillis(6_500));
            fleet.heartbeat(w.donor);
            fleet.heartbeat(w.target);
            untilRan(() -> leaseSweeper.sweepOnce().block().ran());
            assertThat(w.state(lease)).isEqualTo("UNCERTAIN");
            // a second engine with a stable name dies too
            String name = "decode-pod-" + java.util.UUID.randomUUID();
            String engineToken = tokens.mint(Role.ENGINE);
            java.util.Map<String, Object> named =
                    fleet.post("/api/v1/incarnations", engineToken, registration(name, w.domain), 201);
            String namedId = (String) named.get("incarnationId");
            fleet.heartbeat(new Fleet.Engine(namedId, engineToken, "host-" + name, w.domain));
            // the donor and the named engine stop heartbeating; the target keeps going
            clock.advance(Duration.ofSeconds(61));
            fleet.heartbeat(w.target);
            // SUSPECT for a sweep, then LOST, or already RECLAIM_PENDING if the scheduled lease sweeper
            // saw its held lease; a sweep skips a row another transaction is updating, so sweep until
            for (int i = 0; i < 10 && !List.of("LOST", "RECLAIM_PENDING").contains(stateOf(w.donor)); i++) {
                untilRan(() -> sweeper.sweepOnce().block().ran());
            }
            assertThat(stateOf(w.donor)).isIn("LOST", "RECLAIM_PENDING");

            signIn(tokens.mint(Role.OPERATOR));
            open("/admin/cleanup");
            wait.until(ExpectedConditions.presenceOfElementLocated(By.id("plan-" + w.donor.id())));
            shot("cleanup-candidates");
            browser.findElement(By.id("plan-" + w.donor.id())).click();
            wait.until(ExpectedConditions.presenceOfElementLocated(By.id("execute-form")));
            assertThat(browser.findElement(By.id("blockers")).getText()).contains("not proven quiesced");
            assertThat(browser.findElement(By.id("pinned-blocks")).getText()).isEqualTo("16");
            shot("cleanup-plan");
            // the reason alone is not enough while a transfer is unproven
            browser.findElement(By.id("reason"))
                    .sendKeys("decode pod lost with its node; GPU reset confirmed by on-call");
            browser.findElement(By.id("confirm")).sendKeys("not-the-id");
            browser.findElement(By.id("execute")).click();
            wait.until(ExpectedConditions.presenceOfElementLocated(By.id("execute-error")));
            assertThat(browser.findElement(By.id("execute-error")).getText()).contains("Type the incarnation id");
            assertThat(w.state(lease)).isEqualTo("UNCERTAIN");
            browser.findElement(By.id("confirm")).clear();
            browser.findElement(By.id("confirm")).sendKeys(w.donor.id());
            browser.findElement(By.id("execute")).click();
            wait.until(ExpectedConditions.presenceOfElementLocated(By.id("executed")));
            assertThat(browser.findElement(By.id("executed")).getText()).contains("RECLAIMED");
            shot("cleanup-executed");
            assertThat(w.state(lease)).isNotEqualTo("UNCERTAIN");
            browser.findElement(By.id("audit-link")).click();
            wait.until(d -> d.getPageSource().contains("RECLAIMED"));
            shot("cleanup-audit");

            // the named engine: no transfer in flight, so no attestation; its name is free afterwards
            fleet.postRaw("/api/v1/incarnations", tokens.mint(Role.ENGINE), registration(name, w.domain))
                    .expectStatus()
                    .isEqualTo(409);
            open("/admin/cleanup");
            browser.findElement(By.id("plan-" + namedId)).click();
            wait.until(ExpectedConditions.presenceOfElementLocated(By.id("execute-form")));
            assertThat(browser.findElements(By.id("confirm"))).isEmpty();
            browser.findElement(By.id("reason")).sendKeys("pod deleted");
            browser.findElement(By.id("execute")).click();
            wait.until(ExpectedConditions.presenceOfElementLocated(By.id("executed")));
            fleet.post("/api/v1/incarnations", tokens.mint(Role.ENGINE), registration(name, w.domain), 201);
        } finally {
            w.restore();
        }
    }

    private static java.util.Map<String, Object> registration(String name, String domain) {
        String host = "host-" + name;
        return java.util.Map.of(
                "stableName",
                name,
                "role",
                "DECODE",
                "domainId",
                domain,
                "hostId",
                host,
                "controlEndpoint",
                "tcp://" + host + ":5557",
                "capabilities",
                java.util.List.of("kv.fetch_gpu@1.0"),
                "ranks",
                java.util.List.of(
                        java.util.Map.of("rank", 0, "gpuOrdinal", 0, "gpuUuid", "GPU-" + java.util.UUID.randomUUID()),
                        java.util.Map.of("rank", 1, "gpuOrdinal", 1, "gpuUuid", "GPU-" + java.util.UUID.randomUUID())));
    }

    private Object stateOf(Fleet.Engine engine) {
        return fleet.get("/api/v1/incarnations/" + engine.id(), tokens.operator())
                .get("state");
    }

    private static void untilRan(java.util.function.BooleanSupplier sweep) {
        for (int i = 0; i < 40 && !sweep.getAsBoolean(); i++) {
            io.kvreuse.support.LeaseWorld.sleep(50);
        }
    }

    private void signIn(String token) {
        open("/login");
        browser.findElement(By.id("token")).sendKeys(token);
        browser.findElement(By.cssSelector("#login-form button")).click();
        wait.until(ExpectedConditions.urlMatches(".*/admin$"));
    }

    private String stateOf(String incarnationId) {
        return browser.findElement(By.cssSelector("tr[data-id='" + incarnationId + "'] .inc-state"))
                .getText();
    }

    private String fieldError(String field) {
        return browser.findElement(By.cssSelector(".field-error[data-field='" + field + "']"))
                .getText();
    }

    private void fill(String id, String value) {
        WebElement input = browser.findElement(By.id(id));
        input.clear();
        input.sendKeys(value);
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
