package io.kvreuse.incarnation;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * How long an incarnation has provably been silent, as one replica's liveness sweeper can tell.
 * Nobody is judged silent for time this replica was not watching: before its port opened, heartbeats
 * could not reach it (a restart of the only replica, or of all of them, is not silence of the fleet);
 * while PostgreSQL is unreachable, heartbeats cannot be recorded. So silence counts only from the
 * moment the replica could hear again — its web server listening, then the first sweep that reached
 * the database after a failed one — and until {@code after} has passed since then, nobody is judged
 * silent for {@code after}. Without this a restart or an outage longer than {@code lost-after} would
 * make every engine of the fleet LOST (final) in the first sweep after it.
 */
final class ObservedSilence {

    private boolean listening;
    private boolean failing;
    private @Nullable Instant observingSince;

    /** The replica's web server accepts connections as of {@code now}: heartbeats can arrive. */
    synchronized void listening(Instant now) {
        if (!listening) {
            listening = true;
            observingSince = now;
        }
    }

    /** A sweep could not reach the database. */
    synchronized void failed() {
        failing = true;
    }

    /** A sweep reached the database at {@code now}: the end of an outage if the last one had not. */
    synchronized void reached(Instant now) {
        if (failing) {
            failing = false;
            if (listening) {
                observingSince = now;
            }
        }
    }

    /**
     * The heartbeat cutoff for "silent for {@code after} as of {@code now}", or empty while this
     * replica has been able to hear engines for less than {@code after}.
     */
    synchronized Optional<Instant> cutoff(Instant now, Duration after) {
        Instant cutoff = now.minus(after);
        if (!listening || failing || observingSince == null || observingSince.isAfter(cutoff)) {
            return Optional.empty();
        }
        return Optional.of(cutoff);
    }
}
