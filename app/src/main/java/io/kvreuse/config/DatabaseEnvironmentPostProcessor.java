package io.kvreuse.config;

import io.kvreuse.protocol.KvReuseHome;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.commons.logging.Log;
import org.springframework.boot.EnvironmentPostProcessor;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.logging.DeferredLogFactory;
import org.springframework.core.Ordered;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;

/**
 * Chooses the control plane's PostgreSQL before any datasource is configured: an external one
 * from {@code KVREUSE_DB_URL} (or Spring's own properties), otherwise the embedded development
 * database under {@code KVREUSE_HOME}. The node-agent role never touches PostgreSQL.
 */
final class DatabaseEnvironmentPostProcessor implements EnvironmentPostProcessor, Ordered {

    static final String EMBEDDED_FLAG = "kvreuse.database.embedded";
    private final Log log;

    DatabaseEnvironmentPostProcessor(DeferredLogFactory logs) {
        this.log = logs.getLog(DatabaseEnvironmentPostProcessor.class);
    }

    @Override
    public void postProcessEnvironment(ConfigurableEnvironment env, SpringApplication application) {
        if (Roles.isAgent(env)) {
            env.getPropertySources().addFirst(new MapPropertySource("kvreuse-agent-role", agentRole(env)));
            return;
        }
        Map<String, Object> props = new HashMap<>();
        String jdbcUrl = env.getProperty("kvreuse.db.url");
        String r2dbcUrl = env.getProperty("spring.r2dbc.url");
        if (jdbcUrl != null && !jdbcUrl.isBlank()) {
            useExternal(env, props, toJdbc(jdbcUrl));
        } else if (r2dbcUrl != null && !r2dbcUrl.isBlank()) {
            props.putIfAbsent("spring.flyway.url", env.getProperty("spring.flyway.url", toJdbc(r2dbcUrl)));
            props.put(
                    "spring.flyway.user",
                    env.getProperty("spring.flyway.user", env.getProperty("spring.r2dbc.username", "")));
            props.put(
                    "spring.flyway.password",
                    env.getProperty("spring.flyway.password", env.getProperty("spring.r2dbc.password", "")));
        } else {
            useEmbedded(env, props);
        }
        env.getPropertySources().addFirst(new MapPropertySource("kvreuse-database", props));
    }

    /**
     * The agent never touches PostgreSQL: no datasource, R2DBC or Flyway auto-configuration at all
     * (they would otherwise start an embedded database or fail for want of a URL).
     */
    private static Map<String, Object> agentRole(ConfigurableEnvironment env) {
        Map<String, Object> props = new HashMap<>();
        List<String> excluded = new ArrayList<>(AGENT_EXCLUDED);
        String configured = env.getProperty("spring.autoconfigure.exclude", "");
        if (!configured.isBlank()) {
            excluded.add(configured);
        }
        props.put("spring.autoconfigure.exclude", String.join(",", excluded));
        props.put("management.endpoint.health.group.readiness.include", "readinessState,nixl");
        props.put("server.port", env.getProperty("server.port", "8081"));
        return props;
    }

    private static final List<String> AGENT_EXCLUDED = List.of(
            "org.springframework.boot.r2dbc.autoconfigure.R2dbcAutoConfiguration",
            "org.springframework.boot.r2dbc.autoconfigure.R2dbcInitializationAutoConfiguration",
            "org.springframework.boot.r2dbc.autoconfigure.R2dbcProxyAutoConfiguration",
            "org.springframework.boot.r2dbc.autoconfigure.R2dbcTransactionManagerAutoConfiguration",
            "org.springframework.boot.r2dbc.autoconfigure.health.ConnectionFactoryHealthContributorAutoConfiguration",
            "org.springframework.boot.r2dbc.autoconfigure.metrics.ConnectionPoolMetricsAutoConfiguration",
            "org.springframework.boot.r2dbc.autoconfigure.observation.R2dbcObservationAutoConfiguration",
            "org.springframework.boot.data.r2dbc.autoconfigure.DataR2dbcAutoConfiguration",
            "org.springframework.boot.data.r2dbc.autoconfigure.DataR2dbcRepositoriesAutoConfiguration",
            "org.springframework.boot.flyway.autoconfigure.FlywayAutoConfiguration",
            "org.springframework.boot.flyway.autoconfigure.FlywayEndpointAutoConfiguration",
            "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration",
            "org.springframework.boot.jdbc.autoconfigure.DataSourceInitializationAutoConfiguration",
            "org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration",
            "org.springframework.boot.jdbc.autoconfigure.JdbcClientAutoConfiguration",
            "org.springframework.boot.jdbc.autoconfigure.JdbcTemplateAutoConfiguration",
            "org.springframework.boot.jdbc.autoconfigure.JndiDataSourceAutoConfiguration",
            "org.springframework.boot.jdbc.autoconfigure.XADataSourceAutoConfiguration",
            "org.springframework.boot.jdbc.autoconfigure.health.DataSourceHealthContributorAutoConfiguration",
            "org.springframework.boot.jdbc.autoconfigure.metrics.DataSourcePoolMetricsAutoConfiguration");

    private static void useExternal(ConfigurableEnvironment env, Map<String, Object> props, String jdbc) {
        String user = env.getProperty("kvreuse.db.user", "");
        String password = env.getProperty("kvreuse.db.password", "");
        props.put("spring.r2dbc.url", "r2dbc:" + jdbc.substring("jdbc:".length()));
        props.put("spring.r2dbc.username", user);
        props.put("spring.r2dbc.password", password);
        props.put("spring.flyway.url", jdbc);
        props.put("spring.flyway.user", user);
        props.put("spring.flyway.password", password);
    }

    private void useEmbedded(ConfigurableEnvironment env, Map<String, Object> props) {
        Path home = KvReuseHome.resolve(env);
        Path dataDir = home.resolve("pgdata");
        EmbeddedDatabaseProperties embedded = EmbeddedDatabaseProperties.from(env);
        EmbeddedPostgres pg = EmbeddedDatabase.start(dataDir, embedded);
        if (!embedded.durable()) {
            log.warn("the embedded PostgreSQL runs with fsync and synchronous_commit off "
                    + "(kvreuse.embedded-database.durable=false): a host crash loses acknowledged writes. "
                    + "Meant for test suites only.");
        }
        String hostPort = "localhost:" + pg.getPort() + "/postgres";
        log.warn("DEVELOPMENT MODE: no database configured (KVREUSE_DB_URL); using an embedded PostgreSQL "
                + "on port " + pg.getPort() + " with its data in " + dataDir.toAbsolutePath()
                + ". Do not use this mode in production.");
        props.put(EMBEDDED_FLAG, "true");
        props.put("spring.r2dbc.url", "r2dbc:postgresql://" + hostPort);
        props.put("spring.r2dbc.username", "postgres");
        props.put("spring.r2dbc.password", "postgres");
        props.put("spring.flyway.url", "jdbc:postgresql://" + hostPort);
        props.put("spring.flyway.user", "postgres");
        props.put("spring.flyway.password", "postgres");
    }

    private static String toJdbc(String url) {
        if (url.startsWith("jdbc:")) {
            return url;
        }
        if (url.startsWith("r2dbc:")) {
            return "jdbc:" + url.substring("r2dbc:".length()).replace("r2dbc:pool:", "");
        }
        if (url.startsWith("postgresql://") || url.startsWith("postgres://")) {
            return "jdbc:postgresql://" + url.substring(url.indexOf("://") + 3);
        }
        throw new IllegalArgumentException(
                "KVREUSE_DB_URL must look like jdbc:postgresql://host:5432/db, got a different scheme");
    }

    @Override
    public int getOrder() {
        return Ordered.LOWEST_PRECEDENCE;
    }
}
