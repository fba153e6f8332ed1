package io.kvreuse.admin;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import org.openqa.selenium.By;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * Debian's Chromium, headless at 1440×900, driven by Selenium against the dashboard on a local
 * port: sign in, open pages, fill forms, and save a screenshot of each page under
 * {@code target/screenshots/}.
 */
final class AdminBrowser implements AutoCloseable {

    private static final Path CHROMIUM = Path.of("/usr/bin/chromium");
    private static final Path CHROMEDRIVER = Path.of("/usr/bin/chromedriver");
    static final Path SCREENSHOTS = Path.of("target/screenshots");

    final WebDriver driver;
    final WebDriverWait wait;
    private final int port;
    private final Path profile;

    AdminBrowser(int port) throws IOException {
        this.port = port;
        profile = Files.createTempDirectory("kvreuse-chromium-");
        driver = chromium(profile);
        wait = new WebDriverWait(driver, Duration.ofSeconds(10));
        Files.createDirectories(SCREENSHOTS);
    }

    /** Headless Chromium at 1440×900 with its own profile directory, as every browser test starts it. */
    static ChromeDriver chromium(Path profile) {
        assertThat(Files.isExecutable(CHROMIUM) && Files.isExecutable(CHROMEDRIVER))
                .as(
                        "browser tests need Debian's chromium and chromium-driver (apt-get install -y chromium chromium-driver)")
                .isTrue();
        ChromeOptions options = new ChromeOptions();
        options.setBinary(CHROMIUM.toFile());
        options.addArguments(
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
                "--window-size=1440,900",
                "--user-data-dir=" + profile);
        ChromeDriverService service = new ChromeDriverService.Builder()
                .usingDriverExecutable(CHROMEDRIVER.toFile())
                .usingAnyFreePort()
                .build();
        return new ChromeDriver(service, options);
    }

    /** Removes a profile directory {@link #chromium} used. */
    static void deleteProfile(Path profile) throws IOException {
        try (var files = Files.walk(profile)) {
            files.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
        }
    }

    void signIn(String token) {
        open("/login");
        driver.findElement(By.id("token")).sendKeys(token);
        driver.findElement(By.cssSelector("#login-form button")).click();
        wait.until(ExpectedConditions.urlMatches(".*/admin$"));
    }

    void open(String path) {
        driver.get("http://localhost:" + port + path);
    }

    String path() {
        return java.net.URI.create(driver.getCurrentUrl()).getRawPath();
    }

    WebElement find(String id) {
        return driver.findElement(By.id(id));
    }

    WebElement awaitId(String id) {
        return wait.until(ExpectedConditions.visibilityOfElementLocated(By.id(id)));
    }

    boolean present(String id) {
        return !driver.findElements(By.id(id)).isEmpty();
    }

    List<WebElement> all(String css) {
        return driver.findElements(By.cssSelector(css));
    }

    void fill(String id, String value) {
        WebElement input = find(id);
        input.clear();
        input.sendKeys(value);
    }

    String value(String id) {
        return find(id).getDomProperty("value");
    }

    String fieldError(String field) {
        return driver.findElement(By.cssSelector(".field-error[data-field='" + field + "']"))
                .getText();
    }

    void click(String css) {
        driver.findElement(By.cssSelector(css)).click();
    }

    void shot(String name) {
        File png = ((TakesScreenshot) driver).getScreenshotAs(OutputType.FILE);
        try {
            Files.copy(png.toPath(), SCREENSHOTS.resolve(name + ".png"), StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void close() throws IOException {
        driver.quit();
        deleteProfile(profile);
    }
}
