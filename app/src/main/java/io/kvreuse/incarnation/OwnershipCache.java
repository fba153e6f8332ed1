package io.kvreuse.incarnation;

import io.kvreuse.store.PgNotifications;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.springframework.context.event.EventListener;
import org.springframework.stereotype.Component;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;

/**
 * Who owns each incarnation and at which epoch, as the command channel checks it on every poll and
 * acknowledgement, so that check is not a statement per request. An entry is dropped when its
 * incarnation changes: at once for a change this replica committed ({@link IncarnationStateChanged}),
 * on the {@code kvreuse_fleet} notification for a change any replica committed, all of them when
 * the change feed reconnects (notifications may have been missed), and after {@link #MAX_AGE} in
 * any case. A read that an invalidation overtook is answered but not kept.
 */
@Component
class OwnershipCache {

    /** The longest an entry is trusted without a notification: bounds a change whose NOTIFY was lost. */
    static final Duration MAX_AGE = Duration.ofSeconds(2);

    private static final int MAX_ENTRIES = 50_000;
    private static final String INCARNATION = "incarnation:";

    private final Map<UUID, Slot> slots = new ConcurrentHashMap<>();
    private final Disposable feed;

    OwnershipCache(PgNotifications notifications) {
        this.feed = notifications.channel(PgNotifications.FLEET).subscribe(n -> {
            if (n.channel().equals(PgNotifications.RESYNC)) {
                slots.clear();
            } else if (n.payload().startsWith(INCARNATION)) {
                forget(n.payload().substring(INCARNATION.length()));
            }
        });
    }

    /** The cached ownership of {@code id}, or {@code load}'s answer (kept unless the row changed meanwhile). */
    Mono<IncarnationOwnership> get(UUID id, Function<UUID, Mono<IncarnationOwnership>> load) {
        long now = System.nanoTime();
        Slot slot = slots.get(id);
        if (slot != null && slot.value != null && now - slot.readAt < MAX_AGE.toNanos()) {
            return Mono.just(slot.value);
        }
        if (slots.size() >= MAX_ENTRIES) {
            slots.clear();
        }
        // the pending slot marks this read: an invalidation while it runs removes it, so its answer is not kept
        Slot pending = new Slot(null, now);
        slots.put(id, pending);
        return load.apply(id)
                .doOnNext(found -> slots.replace(id, pending, new Slot(found, pending.readAt)))
                .doFinally(signal -> slots.remove(id, pending));
    }

    @EventListener
    void changed(IncarnationStateChanged change) {
        slots.remove(change.incarnationId());
    }

    private void forget(String id) {
        try {
            slots.remove(UUID.fromString(id));
        } catch (IllegalArgumentException e) {
            slots.clear(); // not an id this replica knows how to read: trust nothing cached
        }
    }

    @jakarta.annotation.PreDestroy
    void stop() {
        feed.dispose();
    }

    /**
     * An ownership and when its read started; {@code value} is null while the read runs. Compared by
     * identity: a slot stands for one read.
     */
    private static final class Slot {
        final @Nullable IncarnationOwnership value;
        final long readAt;

        Slot(@Nullable IncarnationOwnership value, long readAt) {
            this.value = value;
            this.readAt = readAt;
        }
    }
}
