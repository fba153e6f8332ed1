package io.kvreuse.lease;

import io.kvreuse.error.InvalidRequestException;
import io.kvreuse.error.ProblemType;
import io.kvreuse.store.PgNotifications;
import java.time.Duration;
import java.util.List;
import java.util.function.Supplier;
import org.springframework.stereotype.Component;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * Long polls woken by PostgreSQL LISTEN/NOTIFY: listen first, then look; if nothing is there, wait
 * for a notification naming the key (or a reconnect, when notifications may have been missed) or
 * the timeout, then look again until the wait is used up. Work committed on any replica wakes
 * pollers on every replica.
 */
@Component
public class LongPoll {

    /** The longest wait a client may ask for. */
    public static final Duration MAX_WAIT = Duration.ofSeconds(30);

    private final PgNotifications notifications;

    LongPoll(PgNotifications notifications) {
        this.notifications = notifications;
    }

    /** Runs {@code fetch} now and, while it finds nothing, again on every wake-up until {@code wait} elapses. */
    public <T> Mono<List<T>> poll(String channel, String key, Duration wait, Supplier<Mono<List<T>>> fetch) {
        long deadline = System.nanoTime() + wait.toNanos();
        return Mono.defer(() -> attempt(channel, key, deadline, fetch));
    }

    private <T> Mono<List<T>> attempt(String channel, String key, long deadline, Supplier<Mono<List<T>>> fetch) {
        Sinks.Empty<Void> woke = Sinks.empty();
        Disposable listening = notifications
                .channel(channel)
                .filter(n -> n.payload().equals(key) || n.channel().equals(PgNotifications.RESYNC))
                .next()
                .subscribe(n -> woke.tryEmitEmpty());
        return fetch.get()
                .flatMap(found -> {
                    long left = deadline - System.nanoTime();
                    if (!found.isEmpty() || left <= 0) {
                        return Mono.just(found);
                    }
                    return woke.asMono()
                            .timeout(Duration.ofNanos(left), Mono.empty())
                            .then(Mono.defer(() -> System.nanoTime() >= deadline
                                    ? fetch.get()
                                    : attempt(channel, key, deadline, fetch)));
                })
                .doFinally(s -> listening.dispose());
    }

    /** The wait a client asked for, bounded to {@code [0, MAX_WAIT]}; 400 for a negative one. */
    public static Duration waitOf(@org.jspecify.annotations.Nullable Long waitMs) {
        if (waitMs == null) {
            return Duration.ZERO;
        }
        if (waitMs < 0) {
            throw new InvalidRequestException(ProblemType.INVALID_PARAMETER, "parameter 'waitMs' must be >= 0");
        }
        return Duration.ofMillis(Math.min(waitMs, MAX_WAIT.toMillis()));
    }
}
