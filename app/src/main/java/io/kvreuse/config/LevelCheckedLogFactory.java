package io.kvreuse.config;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.event.Level;
import org.slf4j.spi.LocationAwareLogger;

/**
 * The commons-logging factory of the control plane and the agent (named in {@code
 * META-INF/services/org.apache.commons.logging.LogFactory}): SLF4J loggers that check the level
 * before they turn a message into a string. Spring and Spring Security log through commons-logging,
 * often as {@code logger.debug(LogMessage.format(...))}, whose rendering is meant to happen only
 * when the message is logged. commons-logging's own SLF4J adapter (1.3 and 1.4) calls {@code
 * String.valueOf(message)} before SLF4J looks at the level, so with DEBUG off every such message was
 * still formatted and thrown away: on every request, each of Spring Security's path matchers wrote
 * itself out with {@link String#format} (docs/selection-latency.md, "Debug messages nobody logs").
 */
public final class LevelCheckedLogFactory extends LogFactory {

    private final Map<String, Log> logs = new ConcurrentHashMap<>();
    private final Map<String, Object> attributes = new ConcurrentHashMap<>();

    @Override
    public Log getInstance(Class<?> clazz) {
        return getInstance(clazz.getName());
    }

    @Override
    public Log getInstance(String name) {
        return logs.computeIfAbsent(name, n -> new Slf4jLog(LoggerFactory.getLogger(n)));
    }

    @Override
    public @Nullable Object getAttribute(String name) {
        return attributes.get(name);
    }

    @Override
    public String[] getAttributeNames() {
        return attributes.keySet().toArray(String[]::new);
    }

    @Override
    public void removeAttribute(String name) {
        attributes.remove(name);
    }

    @Override
    public void setAttribute(String name, @Nullable Object value) {
        if (value == null) {
            attributes.remove(name);
        } else {
            attributes.put(name, value);
        }
    }

    @Override
    public void release() {
        logs.clear();
    }

    /**
     * One logger: every call is {@link #log} at its level, which checks the level before the message
     * becomes text. Through {@link LocationAwareLogger} (logback's loggers are) so that a pattern that
     * prints the caller names the class that logged, not this one.
     */
    record Slf4jLog(Logger logger) implements Log {

        private static final String FQCN = Slf4jLog.class.getName();

        private void log(Level level, @Nullable Object message, @Nullable Throwable t) {
            if (!logger.isEnabledForLevel(level)) {
                return;
            }
            String text = String.valueOf(message);
            if (logger instanceof LocationAwareLogger l) {
                l.log(null, FQCN, level.toInt(), text, null, t);
            } else {
                logger.atLevel(level).setCause(t).log(text);
            }
        }

        @Override
        public boolean isTraceEnabled() {
            return logger.isTraceEnabled();
        }

        @Override
        public boolean isDebugEnabled() {
            return logger.isDebugEnabled();
        }

        @Override
        public boolean isInfoEnabled() {
            return logger.isInfoEnabled();
        }

        @Override
        public boolean isWarnEnabled() {
            return logger.isWarnEnabled();
        }

        @Override
        public boolean isErrorEnabled() {
            return logger.isErrorEnabled();
        }

        @Override
        public boolean isFatalEnabled() {
            return logger.isErrorEnabled();
        }

        @Override
        public void trace(@Nullable Object message) {
            log(Level.TRACE, message, null);
        }

        @Override
        public void trace(@Nullable Object message, @Nullable Throwable t) {
            log(Level.TRACE, message, t);
        }

        @Override
        public void debug(@Nullable Object message) {
            log(Level.DEBUG, message, null);
        }

        @Override
        public void debug(@Nullable Object message, @Nullable Throwable t) {
            log(Level.DEBUG, message, t);
        }

        @Override
        public void info(@Nullable Object message) {
            log(Level.INFO, message, null);
        }

        @Override
        public void info(@Nullable Object message, @Nullable Throwable t) {
            log(Level.INFO, message, t);
        }

        @Override
        public void warn(@Nullable Object message) {
            log(Level.WARN, message, null);
        }

        @Override
        public void warn(@Nullable Object message, @Nullable Throwable t) {
            log(Level.WARN, message, t);
        }

        @Override
        public void error(@Nullable Object message) {
            log(Level.ERROR, message, null);
        }

        @Override
        public void error(@Nullable Object message, @Nullable Throwable t) {
            log(Level.ERROR, message, t);
        }

        @Override
        public void fatal(@Nullable Object message) {
            log(Level.ERROR, message, null);
        }

        @Override
        public void fatal(@Nullable Object message, @Nullable Throwable t) {
            log(Level.ERROR, message, t);
        }
    }
}
