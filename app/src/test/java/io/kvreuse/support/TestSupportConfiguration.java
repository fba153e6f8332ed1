package io.kvreuse.support;

import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Primary;

/** Beans shared by every integration test: a hand-moved clock, a token helper, a patient test client. */
@TestConfiguration(proxyBeanMethods = false)
public class TestSupportConfiguration {

    @Bean
    @Primary
    MutableClock mutableClock() {
        return new MutableClock();
    }

    /**
     * Every test client waits up to 30 s for an answer (default 5 s): on a loaded 2-core CI machine a
     * first request that generates the OpenAPI document or warms a path can take longer than 5 s.
     */
    @Bean
    org.springframework.boot.webtestclient.autoconfigure.WebTestClientBuilderCustomizer patientTestClient() {
        return builder -> builder.responseTimeout(java.time.Duration.ofSeconds(30));
    }

    @Bean
    ExchangeRecorder exchangeRecorder() {
        return new ExchangeRecorder();
    }

    @Bean
    TestTokens testTokens(org.springframework.beans.factory.ObjectProvider<io.kvreuse.security.ApiTokens> tokens) {
        return new TestTokens(tokens);
    }
}
