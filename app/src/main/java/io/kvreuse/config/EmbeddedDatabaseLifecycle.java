package io.kvreuse.config;

import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.SmartLifecycle;
import org.springframework.stereotype.Component;

/**
 * Stops the development-mode PostgreSQL in the context's very last lifecycle phase, after the web
 * server has drained in-flight requests, so a graceful shutdown never answers 503 for a database
 * that went away underneath it.
 */
@Component
@ConditionalOnProperty(name = DatabaseEnvironmentPostProcessor.EMBEDDED_FLAG, havingValue = "true")
class EmbeddedDatabaseLifecycle implements SmartLifecycle {

    private volatile boolean running;

    @Override
    public void start() {
        EmbeddedDatabase.managedByContext();
        running = true;
    }

    @Override
    public void stop() {
        running = false;
        EmbeddedDatabase.stopAll();
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    @Override
    public int getPhase() {
        return Integer.MIN_VALUE;
    }
}
