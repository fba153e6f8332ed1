package io.kvreuse.lease;

import io.kvreuse.error.InvalidRequestException;
import io.kvreuse.error.ProblemType;
import io.kvreuse.store.PgNotifications;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Long polls woken by PostgreSQL LISTEN/NOTIFY: listen first, then look; if nothing is there, wait
 * for a notification naming the key (or a reconnect, when notifications may have been missed) or
 * the timeout, then look again until the wait is used up. Work committed on any replica wakes
 * pollers on every replica. An empty look may say until when nothing comes due unnotified; until
 * then (at most {@link #MAX_QUIET}) and unless a notification for the key or a reconnect came
 * after the look began, a poll that waits skips its looks. A poll without a wait always looks.
 */
@Component
public class LongPoll {

    /** The longest wait a client may ask for. */
    public static final Duration MAX_WAIT = Duration.ofSeconds(30);

    /** The longest a key is trusted quiet: bounds a notification lost while the feed reconnects. */
    static final Duration MAX_QUIET = Duration.ofSeconds(10);

    /** The channels whose keys can be known quiet: their notifications end the quiet. */
    private static final List<String> WATCHED = List.of(PgNotifications.COMMANDS, PgNotifications.ORDERS);

    /** What one look found and, when nothing, until when nothing comes due unnotified (null: unknown). */
    public record Look<T>(List<T> found, @Nullable Instant quietUntil) {}

    private final PgNotifications notifications;
    private final Clock clock;
    // channel:key → a running look's token, then the instant the key is quiet until; notifications remove it
    private final Map<String, Object> quiet = new ConcurrentHashMap<>();

    LongPoll(PgNotifications notifications, Clock clock) {
        this.notifications = notifications;
        this.clock = clock;
        for (String channel : WATCHED) {
            notifications.channel(channel).subscribe(n -> {
                if (n.channel().equals(PgNotifications.RESYNC)) {
                    quiet.clear();
                } else {
                    quiet.remove(channel + ':' + n.payload());
                }
            });
        }
    }

    /** Looks now and, while nothing is found, again on every wake-up until {@code wait} elapses. */
    public <T> Mono<List<T>> poll(String channel, String key, Duration wait, Supplier<Mono<Look<T>>> look) {
        String mark = channel + ':' + key;
        if (wait.isZero()) {
            return Mono.defer(() -> look(mark, false, look));
        }
        boolean trusts = WATCHED.contains(channel);
        Flux<Object> wakes = notifications
                .channel(channel)
                .filter(n -> n.payload().equals(key) || n.channel().equals(PgNotifications.RESYNC))
                .onBackpressureLatest()
                .cast(Object.class);
        return Flux.merge(wakes, Mono.just(key)) // listening before the first look
                .takeUntilOther(Mono.delay(wait))
                .concatMap(wake -> look(mark, trusts, look), 1)
                .filter(found -> !found.isEmpty())
                .next()
                .switchIfEmpty(Mono.defer(() -> look(mark, trusts, look)));
    }

    /** One look, skipped while the key is known quiet; an empty one marks it quiet unless a notification came meanwhile. */
    private <T> Mono<List<T>> look(String mark, boolean trustQuiet, Supplier<Mono<Look<T>>> look) {
        if (trustQuiet
                && quiet.get(mark) instanceof Instant until
                && clock.instant().isBefore(until)) {
            return Mono.just(List.of());
        }
        Object looking = new Object();
        quiet.put(mark, looking);
        return look.get().map(l -> {
            Instant cap = clock.instant().plus(MAX_QUIET);
            if (!l.found().isEmpty() || l.quietUntil() == null) {
                quiet.remove(mark, looking);
            } else {
                quiet.replace(mark, looking, l.quietUntil().isBefore(cap) ? l.quietUntil() : cap);
            }
            return l.found();
        });
    }

    /** The wait a client asked for, bounded to {@code [0, MAX_WAIT]}; 400 for a negative one. */
    public static Duration waitOf(@Nullable Long waitMs) {
        if (waitMs == null) {
            return Duration.ZERO;
        }
        if (waitMs < 0) {
            throw new InvalidRequestException(ProblemType.INVALID_PARAMETER, "parameter 'waitMs' must be >= 0");
        }
        return Duration.ofMillis(Math.min(waitMs, MAX_WAIT.toMillis()));
    }
}
