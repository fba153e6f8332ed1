package io.kvreuse.admin;

import java.time.Clock;
import java.time.Duration;
import org.springframework.web.server.WebSession;
import org.springframework.web.server.session.InMemoryWebSessionStore;
import reactor.core.publisher.Mono;

/**
 * Browser sessions of this replica, expiring after the configured idle time as measured by the
 * application's clock. Sessions live in memory: a load balancer in front of several replicas must
 * keep a browser on one replica (sticky sessions), or the operator signs in again.
 */
final class AdminSessionStore extends InMemoryWebSessionStore {

    private final Duration idleTimeout;

    AdminSessionStore(Duration idleTimeout, int maxSessions, Clock clock) {
        this.idleTimeout = idleTimeout;
        setMaxSessions(maxSessions);
        setClock(clock);
    }

    @Override
    public Mono<WebSession> createWebSession() {
        return super.createWebSession().doOnNext(session -> session.setMaxIdleTime(idleTimeout));
    }
}
