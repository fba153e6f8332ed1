package io.kvreuse.incarnation;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * How long an incarnation has provably been silent, as one replica's liveness sweeper can tell.
 * While PostgreSQL is unreachable, engines' heartbeats cannot be recorded, so silence measured across
 * an outage says nothing about the engine. After a failed sweep, silence counts again only from the
 * first sweep that reached the database: until {@code after} has passed since then, nobody is judged
 * silent for {@code after}. Without this a database outage longer than {@code lost-after} would make
 * every engine of the fleet LOST (final) in the first sweep after it.
 */
final class ObservedSilence {

    private boolean failing;
    private @Nullable Instant observingSince;

    /** A sweep could not reach the database. */
    synchronized void failed() {
        failing = true;
    }

    /** A sweep reached the database at {@code now}: the end of an outage if the last one had not. */
    synchronized void reached(Instant now) {
        if (failing) {
            failing = false;
            observingSince = now;
        }
    }

    /**
     * The heartbeat cutoff for "silent for {@code after} as of {@code now}", or empty while the
     * database has been observable for less than {@code after} since an outage.
     */
    synchronized Optional<Instant> cutoff(Instant now, Duration after) {
        Instant cutoff = now.minus(after);
        if (failing || observingSince != null && observingSince.isAfter(cutoff)) {
            return Optional.empty();
        }
        return Optional.of(cutoff);
    }
}
