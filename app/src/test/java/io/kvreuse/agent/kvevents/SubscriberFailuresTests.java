package io.kvreuse.agent.kvevents;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.zeromq.ZMQException;
import zmq.ZError;

/** What the agent says about a subscriber that keeps stopping: once, then a reminder with the count, and its recovery. */
class SubscriberFailuresTests {

    /** What JeroMQ's connect throws for a host name that does not resolve. */
    private static final ZMQException NO_HOST =
            new ZMQException("no-such-host.invalid: Name or service not known", ZError.EADDRNOTAVAIL);

    /** The same failure once the JDK has cached the lookup's failure: other words, the same error code. */
    private static final ZMQException NO_HOST_CACHED = new ZMQException("no-such-host.invalid", ZError.EADDRNOTAVAIL);

    private static final ZMQException IN_USE = new ZMQException("Address already in use", ZError.EADDRINUSE);

    private static final long REFRESH = Duration.ofSeconds(2).toNanos();

    private final SubscriberFailures failures = new SubscriberFailures("bank b rank 1");

    @Test
    void aSubscriberStoppingAtEveryRefreshIsOneWarningAndAReminderEveryFiveMinutesWithTheCount() {
        long t = 1_000;
        assertThat(failures.stopped(NO_HOST, t))
                .startsWith("bank b rank 1: subscriber stopped: " + NO_HOST)
                .contains("every 5 minutes");
        int quiet = 0;
        // the same cause at every refresh until just before the reminder is due: nothing said
        while (t + REFRESH < 1_000 + SubscriberFailures.REMIND.toNanos()) {
            t += REFRESH;
            assertThat(failures.stopped(quiet % 2 == 0 ? NO_HOST_CACHED : NO_HOST, t))
                    .as("stop at %d ns", t)
                    .isNull();
            quiet++;
        }
        assertThat(quiet).isEqualTo(149);
        t += REFRESH;
        assertThat(failures.stopped(NO_HOST, t))
                .isEqualTo("bank b rank 1: subscriber still stopping at every start: 150 stops in the last 5 minutes"
                        + " (151 since it last ran), the last: " + NO_HOST);
        // the count of the next reminder starts again from the last line said
        assertThat(failures.stopped(NO_HOST, t + REFRESH)).isNull();
        assertThat(failures.stopped(NO_HOST, t + SubscriberFailures.REMIND.toNanos()))
                .contains(": 2 stops in the last 5 minutes (153 since it last ran)");
    }

    @Test
    void anotherCauseIsSaidAtOnce() {
        assertThat(failures.stopped(NO_HOST, 0)).isNotNull();
        assertThat(failures.stopped(NO_HOST_CACHED, REFRESH)).isNull();
        assertThat(failures.stopped(IN_USE, 2 * REFRESH))
                .isEqualTo("bank b rank 1: subscriber stopped with another cause after 2 restarts: " + IN_USE);
        // and a return to the first cause is a change too
        assertThat(failures.stopped(NO_HOST, 3 * REFRESH)).contains("another cause after 3 restarts");
        // an error that is not ZMQ's is told apart by its type and message
        IllegalStateException closed = new IllegalStateException("context closed");
        assertThat(failures.stopped(closed, 4 * REFRESH)).endsWith("after 4 restarts: " + closed);
        assertThat(failures.stopped(new IllegalStateException("context closed"), 5 * REFRESH))
                .isNull();
        assertThat(failures.stopped(new IllegalStateException("queue full"), 6 * REFRESH))
                .contains("another cause");
    }

    @Test
    void aSubscriberThatRunsAgainSaysSoOnceAndAStopAfterThatIsAFirstStopAgain() {
        assertThat(failures.running()).as("never stopped: nothing to say").isNull();
        failures.stopped(NO_HOST, 0);
        failures.stopped(NO_HOST, REFRESH);
        failures.stopped(NO_HOST, 2 * REFRESH);
        assertThat(failures.running()).isEqualTo("bank b rank 1: subscriber running again after 3 restarts");
        assertThat(failures.running()).isNull();
        failures.stopped(NO_HOST, 2 * REFRESH + 1);
        assertThat(failures.running()).isEqualTo("bank b rank 1: subscriber running again after 1 restart");
        assertThat(failures.running()).isNull();
        // a new episode, seconds later: said at once, not held back as a repeat of the old cause
        assertThat(failures.stopped(NO_HOST, 3 * REFRESH)).startsWith("bank b rank 1: subscriber stopped: ");
    }
}
