package io.kvreuse.support;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.context.annotation.Import;

/**
 * A full application on a random port against the real embedded PostgreSQL (one server per test
 * JVM, data under {@code target/test-home}). Every integration test uses this one configuration
 * so the Spring context is built once; tests create data unique to themselves.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "kvreuse.home=target/test-home",
            // speed over durability, for tests only: the product default is durable
            "kvreuse.embedded-database.durable=false",
            "KVREUSE_BOOTSTRAP_TOKEN=" + TestTokens.BOOTSTRAP,
            // tests drive publication through owner events; the periodic reconciliation would race them
            "kvreuse.inventory.publication-check=10m",
            // headline tests write answer minutes at hours of the past that nothing else uses
            "kvreuse.admin.headline.minutes-kept=36500d"
        })
@AutoConfigureWebTestClient
@Import(TestSupportConfiguration.class)
public @interface IntegrationTest {}
