package io.kvreuse.admin;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.support.MutableClock;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.web.server.WebSession;

class AdminSessionStoreTests {

    @Test
    void sessionExpiresAfterTheConfiguredIdleTime() {
        MutableClock clock = new MutableClock();
        AdminSessionStore store = new AdminSessionStore(Duration.ofMinutes(30), 100, clock);
        WebSession session = store.createWebSession().block();
        session.start();
        session.getAttributes().put("k", "v");
        session.save().block();
        assertThat(session.getMaxIdleTime()).isEqualTo(Duration.ofMinutes(30));

        clock.advance(Duration.ofMinutes(29));
        WebSession touched = store.retrieveSession(session.getId()).block();
        assertThat(touched).isNotNull();

        // idle is measured from the last access, not from creation
        clock.advance(Duration.ofMinutes(29));
        assertThat(store.retrieveSession(session.getId()).block()).isNotNull();

        clock.advance(Duration.ofMinutes(31));
        assertThat(store.retrieveSession(session.getId()).block()).isNull();
    }
}
