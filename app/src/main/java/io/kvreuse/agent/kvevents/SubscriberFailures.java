package io.kvreuse.agent.kvevents;

import java.time.Duration;
import org.jspecify.annotations.Nullable;
import org.zeromq.ZMQException;

/**
 * What the node agent says about one rank's subscriber that keeps stopping, across the restarts the
 * bridge gives it (each restart is a new {@link RankStream} with the same failures). A subscriber
 * that fails at every start (an engine endpoint whose host does not resolve, say) is started again
 * at every refresh, every 2 s by default; logging each stop would write a line every refresh for as
 * long as the cause lasts. So: the first stop is a warning, a stop with another cause is a warning
 * at once, the same cause again is counted and repeated as one warning every {@link #REMIND} with
 * the count, and a subscriber that runs again (for {@link #STEADY} past its subscription, so one that
 * stops just after subscribing does not read as recovered) says so once. Every restart is
 * still counted by {@code kvreuse_agent_kv_events_subscribers_restarted_total}. Times are the
 * caller's monotonic nanoseconds. Used by one receiver thread at a time, but by successive ones.
 */
final class SubscriberFailures {

    static final Duration REMIND = Duration.ofMinutes(5);

    static final Duration STEADY = Duration.ofSeconds(10);

    private final String stream;
    /** Stops since the subscriber last ran steadily. */
    private int stops;
    /** Stops since the last line said. */
    private int unsaid;

    private @Nullable String lastKind;
    private long lastSaidNanos;

    /** {@code stream}: how lines name the rank's stream, e.g. "bank 3f2a… rank 1". */
    SubscriberFailures(String stream) {
        this.stream = stream;
    }

    /** The subscriber stopped on {@code error}: the warning to log now, or null to stay quiet. */
    synchronized @Nullable String stopped(Throwable error, long nowNanos) {
        String cause = error.toString();
        String kind = kind(error);
        stops++;
        unsaid++;
        boolean first = stops == 1;
        boolean changed = !kind.equals(lastKind);
        boolean due = nowNanos - lastSaidNanos >= REMIND.toNanos();
        lastKind = kind;
        if (!first && !changed && !due) {
            return null;
        }
        String line;
        if (first) {
            line = stream + ": subscriber stopped: " + cause + "; it starts again at every refresh, and while it keeps"
                    + " stopping this is said again every " + REMIND.toMinutes() + " minutes";
        } else if (changed) {
            line = stream + ": subscriber stopped with another cause after " + count(stops - 1, "restart") + ": "
                    + cause;
        } else {
            long minutes =
                    Math.max(1, Duration.ofNanos(nowNanos - lastSaidNanos).toMinutes());
            line = stream + ": subscriber still stopping at every start: " + count(unsaid, "stop") + " in the last "
                    + count(minutes, "minute") + " (" + stops + " since it last ran), the last: " + cause;
        }
        unsaid = 0;
        lastSaidNanos = nowNanos;
        return line;
    }

    private static String count(long n, String noun) {
        return n + " " + noun + (n == 1 ? "" : "s");
    }

    /**
     * Which cause a stop had, for telling a repeat from a change: ZMQ's error code for its errors (the
     * same failure's text varies: a host name that did not resolve is reported differently once the
     * JDK caches the lookup's failure), else the exception and its message.
     */
    private static String kind(Throwable error) {
        return error instanceof ZMQException z
                ? "ZMQ error " + z.getErrorCode()
                : error.getClass().getName() + ": " + error.getMessage();
    }

    /** The subscriber has run for {@link #STEADY}: the line to log if it had been stopping, else null. */
    synchronized @Nullable String running() {
        if (stops == 0) {
            return null;
        }
        String line = stream + ": subscriber running again after " + count(stops, "restart");
        stops = 0;
        unsaid = 0;
        lastKind = null;
        return line;
    }
}
