package io.kvreuse.store;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/**
 * How long an engine or a node agent has provably been silent, as one replica's liveness sweeper can
 * tell.
 * Nobody is judged silent for time this replica was not watching: before its port opened, heartbeats
 * could not reach it (a restart of the only replica, or of all of them, is not silence of the fleet);
 * while PostgreSQL is unreachable, heartbeats cannot be recorded. So silence counts only from the
 * moment the replica could hear again — its web server listening, then the first sweep that reached
 * the database after a failed one — and until {@code after} has passed since then, nobody is judged
 * silent for {@code after}. Without this a restart or an outage longer than {@code lost-after} would
 * make every engine of the fleet LOST (final) in the first sweep after it, and every agent OFFLINE.
 *
 * <p>A database that hangs rather than fails (a stalled disk, a frozen VM) fails no sweep: its
 * statements just do not come back, and neither do the heartbeats' writes. So a sweep that reaches
 * the database more than {@code unwatchedGap} of real time (a monotonic clock, not the injected one)
 * after the previous sweep did also ends a time nobody watched: silence counts again only from then.
 */
public final class ObservedSilence {

    private final long unwatchedGapNanos;
    private final LongSupplier nanos;
    private boolean listening;
    private boolean failing;
    private @Nullable Instant observingSince;
    private long lastReachedNanos;
    private @Nullable Instant lastReachedAt;

    /**
     * @param unwatchedGap real time between two sweeps that reached the database beyond which the
     *     time between them counts as not watched
     * @param nanos a monotonic clock in nanoseconds ({@code System::nanoTime})
     */
    public ObservedSilence(Duration unwatchedGap, LongSupplier nanos) {
        this.unwatchedGapNanos = unwatchedGap.toNanos();
        this.nanos = nanos;
    }

    /** The replica's web server accepts connections as of {@code now}: heartbeats can arrive. */
    public synchronized void listening(Instant now) {
        if (!listening) {
            listening = true;
            observingSince = now;
        }
    }

    /** A sweep could not reach the database. */
    public synchronized void failed() {
        failing = true;
    }

    /**
     * A sweep reached the database at {@code now} (read after the database answered): the end of an
     * outage if the last sweep had not, or of a hang if no sweep had for longer than the gap.
     */
    public synchronized void reached(Instant now) {
        long at = nanos.getAsLong();
        boolean hung = lastReachedAt != null && at - lastReachedNanos > unwatchedGapNanos;
        lastReachedNanos = at;
        Instant since = observingSince;
        if (since != null && lastReachedAt != null && now.isBefore(lastReachedAt)) {
            // the wall clock stepped back (NTP; a test resetting its clock): the window keeps the time
            // it had watched, rather than starting in the new clock's future
            Duration watched = Duration.between(since, lastReachedAt);
            observingSince = now.minus(watched.isNegative() ? Duration.ZERO : watched);
        }
        lastReachedAt = now;
        if ((failing || hung) && listening) {
            observingSince = now;
        }
        failing = false;
    }

    /**
     * The heartbeat cutoff for "silent for {@code after} as of {@code now}", or empty while this
     * replica has been able to hear engines for less than {@code after}.
     */
    public synchronized Optional<Instant> cutoff(Instant now, Duration after) {
        Instant cutoff = now.minus(after);
        if (!listening || failing || observingSince == null || observingSince.isAfter(cutoff)) {
            return Optional.empty();
        }
        return Optional.of(cutoff);
    }

    /**
     * The gap for a sweeper that judges silence of {@code suspectAfter} every {@code sweepInterval}:
     * half of {@code suspectAfter}, so a hang shorter than that cannot by itself make a party that
     * reports well within {@code suspectAfter} look silent; at least three sweep intervals, so that
     * sweeps at their usual pace never count as a gap.
     */
    public static Duration gapFor(Duration suspectAfter, Duration sweepInterval) {
        Duration half = suspectAfter.dividedBy(2);
        Duration paced = sweepInterval.multipliedBy(3);
        return half.compareTo(paced) > 0 ? half : paced;
    }
}
