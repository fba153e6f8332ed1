package io.kvreuse.support;

import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Primary;

/** Beans shared by every integration test: a hand-moved clock and a token helper. */
@TestConfiguration(proxyBeanMethods = false)
public class TestSupportConfiguration {

    @Bean
    @Primary
    MutableClock mutableClock() {
        return new MutableClock();
    }

    @Bean
    TestTokens testTokens(org.springframework.beans.factory.ObjectProvider<io.kvreuse.security.ApiTokens> tokens) {
        return new TestTokens(tokens);
    }
}
