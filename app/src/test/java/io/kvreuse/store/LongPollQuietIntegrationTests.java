package io.kvreuse.store;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.support.IntegrationTest;
import io.kvreuse.support.MutableClock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.r2dbc.core.DatabaseClient;
import reactor.core.publisher.Mono;

/**
 * The long poll's quiet marks on their own (keys no lease or order uses): a notification that
 * arrives while a look runs is never lost, and marks that ran out are dropped.
 */
@IntegrationTest
class LongPollQuietIntegrationTests {

    @Autowired
    MutableClock clock;

    @Autowired
    DatabaseClient db;

    @Autowired
    LongPoll longPoll;

    @Test
    void aNotificationThatArrivesWhileALookRunsIsNotLost() {
        String key = UUID.randomUUID().toString();
        AtomicInteger looks = new AtomicInteger();
        long start = System.nanoTime();
        List<String> found = longPoll.<String>poll(PgNotifications.COMMANDS, key, Duration.ofSeconds(6), () -> {
                    int n = looks.incrementAndGet();
                    Mono<Void> notify = n == 1
                            ? db.sql("SELECT pg_notify(:c, :k)")
                                    .bind("c", PgNotifications.COMMANDS)
                                    .bind("k", key)
                                    .then()
                            : Mono.empty();
                    return notify.then(Mono.delay(Duration.ofMillis(300)))
                            .thenReturn(new LongPoll.Look<>(n == 1 ? List.of() : List.of("work"), Instant.MAX));
                })
                .block(Duration.ofSeconds(10));
        assertThat(found).containsExactly("work");
        assertThat(looks).hasValue(2);
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(4));
        // the first look's empty answer did not mark the key quiet: a waiting poll looks again, once
        assertThat(quietPoll(key, looks)).isEmpty();
        assertThat(looks).hasValue(3);
        // and that look's empty answer did: the next waiting poll looks no more
        assertThat(quietPoll(key, looks)).isEmpty();
        assertThat(looks).hasValue(3);
    }

    @Test
    void quietMarksThatRanOutAreDroppedWhenLaterLooksMarkOthers() {
        String gone = UUID.randomUUID().toString();
        Instant soon = clock.instant().plusSeconds(1);
        assertThat(longPoll.<String>poll(
                                PgNotifications.COMMANDS,
                                gone,
                                Duration.ZERO,
                                () -> Mono.just(new LongPoll.Look<String>(List.of(), soon)))
                        .block(Duration.ofSeconds(5)))
                .isEmpty();
        assertThat(longPoll.marked(PgNotifications.COMMANDS, gone)).isTrue();
        clock.advance(LongPoll.MAX_QUIET.plusSeconds(1));
        String other = UUID.randomUUID().toString();
        longPoll.<String>poll(
                        PgNotifications.COMMANDS,
                        other,
                        Duration.ZERO,
                        () -> Mono.just(new LongPoll.Look<String>(List.of(), Instant.MAX)))
                .block(Duration.ofSeconds(5));
        assertThat(longPoll.marked(PgNotifications.COMMANDS, gone))
                .as("a key that stopped polling keeps no mark past its end")
                .isFalse();
        assertThat(longPoll.marked(PgNotifications.COMMANDS, other)).isTrue();
    }

    private List<String> quietPoll(String key, AtomicInteger looks) {
        return longPoll.<String>poll(PgNotifications.COMMANDS, key, Duration.ofMillis(200), () -> {
                    looks.incrementAndGet();
                    return Mono.just(new LongPoll.Look<String>(List.of(), Instant.MAX));
                })
                .block(Duration.ofSeconds(5));
    }
}
