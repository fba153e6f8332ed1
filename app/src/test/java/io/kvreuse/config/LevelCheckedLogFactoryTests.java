package io.kvreuse.config;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;
import org.springframework.security.web.server.util.matcher.OrServerWebExchangeMatcher;
import org.springframework.security.web.server.util.matcher.ServerWebExchangeMatcher;
import reactor.core.publisher.Mono;

/**
 * commons-logging as the control plane sees it: its factory is {@link LevelCheckedLogFactory}, a
 * message is turned into text only when its level is enabled, and what is logged reaches logback
 * with the logging class as its caller.
 */
class LevelCheckedLogFactoryTests {

    /** Keeps what is logged, with its caller taken while it is logged (logback finds it on the stack). */
    private final ListAppender<ILoggingEvent> events = new ListAppender<>() {
        @Override
        protected void append(ILoggingEvent e) {
            e.getCallerData();
            super.append(e);
        }
    };

    private Logger logger;
    private Level level;

    @BeforeEach
    void capture() {
        logger = (Logger) LoggerFactory.getLogger(LevelCheckedLogFactoryTests.class);
        level = logger.getLevel();
        events.start();
        logger.addAppender(events);
    }

    @AfterEach
    void restore() {
        logger.detachAppender(events);
        logger.setLevel(level);
    }

    /** A message that counts how often it was turned into text. */
    private static final class Counted {
        final AtomicInteger rendered = new AtomicInteger();

        @Override
        public String toString() {
            return "rendered " + rendered.incrementAndGet();
        }
    }

    @Test
    void commonsLoggingUsesTheLevelCheckedFactory() {
        assertThat(LogFactory.getFactory()).isInstanceOf(LevelCheckedLogFactory.class);
        assertThat(LogFactory.getLog(LevelCheckedLogFactoryTests.class))
                .isInstanceOf(LevelCheckedLogFactory.Slf4jLog.class);
    }

    @Test
    void aMessageBelowTheLevelIsNeverRendered() {
        logger.setLevel(Level.INFO);
        Log log = LogFactory.getLog(LevelCheckedLogFactoryTests.class);
        Counted message = new Counted();

        log.trace(message);
        log.debug(message);
        log.debug(message, new IllegalStateException("not logged"));

        assertThat(message.rendered).hasValue(0);
        assertThat(events.list).isEmpty();
        assertThat(log.isDebugEnabled()).isFalse();
        assertThat(log.isInfoEnabled()).isTrue();
    }

    @Test
    void aMessageAtAnEnabledLevelIsLoggedOnceWithItsCallerAndCause() {
        logger.setLevel(Level.DEBUG);
        Log log = LogFactory.getLog(LevelCheckedLogFactoryTests.class);
        Counted message = new Counted();
        IllegalStateException cause = new IllegalStateException("the cause");

        log.debug(message);
        log.warn("careful", cause);
        log.fatal("fatal is logback's error");

        assertThat(message.rendered).hasValue(1);
        assertThat(events.list)
                .extracting(ILoggingEvent::getLevel)
                .containsExactly(Level.DEBUG, Level.WARN, Level.ERROR);
        assertThat(events.list.get(0).getFormattedMessage()).isEqualTo("rendered 1");
        assertThat(events.list.get(1).getThrowableProxy().getMessage()).isEqualTo("the cause");
        assertThat(events.list.get(0).getCallerData()[0].getClassName())
                .as("the caller is the class that logged, not the adapter")
                .isEqualTo(LevelCheckedLogFactoryTests.class.getName());
    }

    /**
     * What the factory is for: Spring Security's matchers log each attempt as {@code
     * LogMessage.format("Trying to match using %s", matcher)}; with DEBUG off no matcher is written out.
     */
    @Test
    void springSecuritysMatchersDoNotWriteThemselvesOutWithDebugOff() {
        Logger security = (Logger) LoggerFactory.getLogger(OrServerWebExchangeMatcher.class);
        Level before = security.getLevel();
        security.setLevel(Level.INFO);
        try {
            AtomicInteger rendered = new AtomicInteger();
            ServerWebExchangeMatcher never = new ServerWebExchangeMatcher() {
                @Override
                public Mono<MatchResult> matches(org.springframework.web.server.ServerWebExchange exchange) {
                    return MatchResult.notMatch();
                }

                @Override
                public String toString() {
                    rendered.incrementAndGet();
                    return "a matcher that never matches";
                }
            };
            MockServerWebExchange exchange = MockServerWebExchange.from(MockServerHttpRequest.get("/api/v1/leases"));

            ServerWebExchangeMatcher.MatchResult result = new OrServerWebExchangeMatcher(never, never)
                    .matches(exchange)
                    .block();

            assertThat(result).isNotNull();
            assertThat(result.isMatch()).isFalse();
            assertThat(rendered)
                    .as("matchers written out for debug messages nobody logs")
                    .hasValue(0);
        } finally {
            security.setLevel(before);
        }
    }
}
