package io.kvreuse.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.logging.DeferredLogs;
import org.springframework.mock.env.MockEnvironment;

/**
 * The embedded PostgreSQL as the product starts it: durable unless a test suite opts out. Each test
 * starts a server of its own on a fresh data directory, the way a first start of kvreuse does.
 */
class EmbeddedDatabaseDurabilityTests {

    @Test
    void productDefaultCommitsDurably(@TempDir Path home) throws Exception {
        Map<String, String> settings = settingsOf(start(home, Map.of()), home);
        assertThat(settings)
                .containsEntry("fsync", "on")
                .containsEntry("synchronous_commit", "on")
                .containsEntry("full_page_writes", "on")
                .doesNotContainValue("off");
    }

    @Test
    void testSuitesMayOptOutOfDurability(@TempDir Path home) throws Exception {
        Map<String, String> settings =
                settingsOf(start(home, Map.of("kvreuse.embedded-database.durable", "false")), home);
        assertThat(settings)
                .containsEntry("fsync", "off")
                .containsEntry("synchronous_commit", "off")
                .doesNotContainValue("on");
    }

    private static org.springframework.core.env.ConfigurableEnvironment start(
            Path home, Map<String, String> properties) {
        MockEnvironment env = new MockEnvironment().withProperty("kvreuse.home", home.toString());
        properties.forEach(env::setProperty);
        new DatabaseEnvironmentPostProcessor(new DeferredLogs()).postProcessEnvironment(env, new SpringApplication());
        assertThat(env.getProperty(DatabaseEnvironmentPostProcessor.EMBEDDED_FLAG))
                .isEqualTo("true");
        return env;
    }

    private static Map<String, String> settingsOf(org.springframework.core.env.ConfigurableEnvironment env, Path home)
            throws Exception {
        Map<String, String> settings = new LinkedHashMap<>();
        try (Connection c = DriverManager.getConnection(
                        env.getRequiredProperty("spring.flyway.url"), "postgres", "postgres");
                Statement s = c.createStatement()) {
            for (String name : new String[] {"fsync", "synchronous_commit", "full_page_writes"}) {
                try (ResultSet rs = s.executeQuery("SHOW " + name)) {
                    rs.next();
                    settings.put(name, rs.getString(1));
                }
            }
        } finally {
            EmbeddedDatabase.stop(home.resolve("pgdata"));
        }
        return settings;
    }
}
