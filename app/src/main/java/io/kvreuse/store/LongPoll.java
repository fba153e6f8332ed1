package io.kvreuse.store;

import io.kvreuse.error.InvalidRequestException;
import io.kvreuse.error.ProblemType;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.springframework.stereotype.Component;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * Long polls woken by PostgreSQL LISTEN/NOTIFY: listen first, then look; if nothing is there, wait
 * for a notification naming the key (or a reconnect, when notifications may have been missed) or
 * the timeout, then look again until the wait is used up. Work committed on any replica wakes
 * pollers on every replica. A look that found nothing may say until when nothing can come due
 * without a notification; until then (at most {@link #MAX_QUIET}), and while no notification for
 * the key or reconnect arrived since that look began, a poll that waits skips its looks. A poll
 * without a wait always looks, so it sees whatever committed before it.
 */
@Component
public class LongPoll {

    /** The longest wait a client may ask for. */
    public static final Duration MAX_WAIT = Duration.ofSeconds(30);

    /** The longest a quiet key is trusted without looking: bounds a notification lost while the feed reconnects. */
    public static final Duration MAX_QUIET = Duration.ofSeconds(10);

    /** What one look found and, when nothing, until when nothing comes due unnotified (null: unknown). */
    public record Look<T>(List<T> found, @Nullable Instant quietUntil) {

        /** A claim statement's rows as one look: what they all found, and the quiet time of the first. */
        public static <T> Look<T> of(List<Look<T>> rows) {
            return new Look<>(rows.stream().flatMap(l -> l.found().stream()).toList(), rows.getFirst().quietUntil);
        }

        /**
         * A claim statement's row that claimed nothing: unknown while {@code due} are due (but locked by
         * another poll), else {@code later} after the next one comes due, or never without a notification.
         */
        public static <T> Look<T> none(long due, @Nullable OffsetDateTime next, Duration later) {
            return new Look<>(
                    List.of(),
                    due > 0
                            ? null
                            : next == null ? Instant.MAX : next.toInstant().plus(later));
        }
    }

    private record Quiet(Object look, @Nullable Instant until) {}

    private final PgNotifications notifications;
    private final Clock clock;
    private final Map<String, Quiet> quiet = new ConcurrentHashMap<>();
    private final Map<String, Disposable> watched = new ConcurrentHashMap<>();
    // when quiet marks that have run out are next dropped: keys of incarnations and hosts that stopped
    // polling would otherwise stay for the replica's lifetime
    private final AtomicReference<Instant> nextPrune = new AtomicReference<>(Instant.MIN);

    LongPoll(PgNotifications notifications, Clock clock) {
        this.notifications = notifications;
        this.clock = clock;
    }

    /** Looks now and, while nothing is found, again on every wake-up until {@code wait} elapses. */
    public <T> Mono<List<T>> poll(String channel, String key, Duration wait, Supplier<Mono<Look<T>>> look) {
        watched.computeIfAbsent(
                channel,
                c -> notifications.channel(c).subscribe(n -> {
                    if (n.channel().equals(PgNotifications.RESYNC)) {
                        quiet.clear();
                    } else {
                        quiet.remove(c + ':' + n.payload());
                    }
                }));
        long deadline = System.nanoTime() + wait.toNanos();
        return Mono.defer(() -> attempt(channel, key, deadline, !wait.isZero(), look));
    }

    private <T> Mono<List<T>> attempt(
            String channel, String key, long deadline, boolean waits, Supplier<Mono<Look<T>>> look) {
        Sinks.Empty<Void> woke = Sinks.empty();
        Disposable listening = notifications
                .channel(channel)
                .filter(n -> n.payload().equals(key) || n.channel().equals(PgNotifications.RESYNC))
                .next()
                .subscribe(n -> woke.tryEmitEmpty());
        String mark = channel + ':' + key;
        return look(mark, waits, look)
                .flatMap(found -> {
                    long left = deadline - System.nanoTime();
                    if (!found.isEmpty() || left <= 0) {
                        return Mono.just(found);
                    }
                    return woke.asMono()
                            .timeout(Duration.ofNanos(left), Mono.empty())
                            .then(Mono.defer(() -> System.nanoTime() >= deadline
                                    ? look(mark, waits, look)
                                    : attempt(channel, key, deadline, waits, look)));
                })
                .doFinally(s -> listening.dispose());
    }

    /** One look, skipped while the key is known quiet; an empty look marks it quiet unless woken meanwhile. */
    private <T> Mono<List<T>> look(String mark, boolean mayTrustQuiet, Supplier<Mono<Look<T>>> look) {
        Quiet known = quiet.get(mark);
        if (mayTrustQuiet
                && known != null
                && known.until() != null
                && clock.instant().isBefore(known.until())) {
            return Mono.just(List.of());
        }
        Quiet looking = new Quiet(new Object(), null);
        quiet.put(mark, looking);
        return look.get()
                .map(l -> {
                    Instant until = l.quietUntil();
                    if (l.found().isEmpty() && until != null) {
                        prune();
                        Instant bounded = until.isBefore(clock.instant().plus(MAX_QUIET))
                                ? until
                                : clock.instant().plus(MAX_QUIET);
                        quiet.replace(mark, looking, new Quiet(looking.look(), bounded));
                    } else {
                        quiet.remove(mark, looking);
                    }
                    return l.found();
                })
                .doOnError(e -> quiet.remove(mark, looking));
    }

    /** Drops the quiet marks that have run out, at most once every {@link #MAX_QUIET}. */
    private void prune() {
        Instant now = clock.instant();
        Instant next = nextPrune.get();
        // a clock set back must not postpone the next drop beyond one MAX_QUIET
        boolean due = !now.isBefore(next) || next.isAfter(now.plus(MAX_QUIET));
        if (due && nextPrune.compareAndSet(next, now.plus(MAX_QUIET))) {
            quiet.values().removeIf(q -> q.until() != null && !now.isBefore(q.until()));
        }
    }

    /** Whether {@code key} of {@code channel} is marked quiet or being looked at (for tests). */
    boolean marked(String channel, String key) {
        return quiet.containsKey(channel + ':' + key);
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
