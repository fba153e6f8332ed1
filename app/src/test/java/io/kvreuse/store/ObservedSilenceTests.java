package io.kvreuse.store;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class ObservedSilenceTests {

    private static final Instant T0 = Instant.parse("2026-11-30T00:00:00Z");
    private static final Duration SUSPECT_AFTER = Duration.ofSeconds(10);
    private static final Duration LOST_AFTER = Duration.ofSeconds(60);
    private static final Duration GAP = Duration.ofSeconds(5);

    /** The monotonic clock the gap is measured on; the tests below move it only where they say so. */
    private final AtomicLong realTime = new AtomicLong();

    @Test
    void withoutAnOutageSilenceIsMeasuredFromTheHeartbeat() {
        ObservedSilence silence = new ObservedSilence(GAP, realTime::get);
        silence.listening(T0.minusSeconds(120));
        silence.reached(T0);
        assertThat(silence.cutoff(T0.plusSeconds(30), SUSPECT_AFTER)).contains(T0.plusSeconds(20));
        assertThat(silence.cutoff(T0.plusSeconds(30), LOST_AFTER)).contains(T0.minusSeconds(30));
    }

    @Test
    void nobodyIsJudgedSilentDuringAnOutageNorUntilTheWindowPassedAfterIt() {
        ObservedSilence silence = new ObservedSilence(GAP, realTime::get);
        silence.listening(T0.minusSeconds(120));
        silence.reached(T0);
        silence.failed();
        // during the outage (a sweep that gets this far would not reach the database anyway)
        assertThat(silence.cutoff(T0.plusSeconds(50), SUSPECT_AFTER)).isEmpty();

        // the database is back after a 90 s outage: longer than lost-after
        Instant back = T0.plusSeconds(90);
        silence.reached(back);
        assertThat(silence.cutoff(back, SUSPECT_AFTER)).isEmpty();
        assertThat(silence.cutoff(back, LOST_AFTER)).isEmpty();
        assertThat(silence.cutoff(back.plusSeconds(9), SUSPECT_AFTER)).isEmpty();

        // once suspect-after has passed since the database came back, silence counts again
        assertThat(silence.cutoff(back.plusSeconds(11), SUSPECT_AFTER)).contains(back.plusSeconds(1));
        assertThat(silence.cutoff(back.plusSeconds(11), LOST_AFTER)).isEmpty();
        assertThat(silence.cutoff(back.plusSeconds(61), LOST_AFTER)).contains(back.plusSeconds(1));
    }

    @Test
    void onlyTheFirstSweepAfterAnOutageStartsTheWindow() {
        ObservedSilence silence = new ObservedSilence(GAP, realTime::get);
        silence.listening(T0.minusSeconds(120));
        silence.failed();
        silence.reached(T0);
        silence.reached(T0.plusSeconds(5)); // a later successful sweep does not move the window
        assertThat(silence.cutoff(T0.plusSeconds(11), SUSPECT_AFTER)).contains(T0.plusSeconds(1));
    }

    @Test
    void aReplicaJudgesNobodyBeforeItCouldHearHeartbeatsNorUntilTheWindowPassedSinceThen() {
        ObservedSilence silence = new ObservedSilence(GAP, realTime::get);
        // the database answers before the web server listens (a restart: engines cannot reach it yet)
        silence.reached(T0);
        assertThat(silence.cutoff(T0.plusSeconds(90), SUSPECT_AFTER)).isEmpty();
        assertThat(silence.cutoff(T0.plusSeconds(90), LOST_AFTER)).isEmpty();

        // listening after a 70 s restart: the time the replica was away is nobody's silence
        Instant listening = T0.plusSeconds(70);
        silence.listening(listening);
        silence.reached(listening.plusSeconds(1));
        assertThat(silence.cutoff(listening.plusSeconds(1), SUSPECT_AFTER)).isEmpty();
        assertThat(silence.cutoff(listening.plusSeconds(9), SUSPECT_AFTER)).isEmpty();
        assertThat(silence.cutoff(listening.plusSeconds(11), SUSPECT_AFTER)).contains(listening.plusSeconds(1));
        assertThat(silence.cutoff(listening.plusSeconds(59), LOST_AFTER)).isEmpty();
        assertThat(silence.cutoff(listening.plusSeconds(61), LOST_AFTER)).contains(listening.plusSeconds(1));

        // a second start event (e.g. a management port) does not move the window
        silence.listening(listening.plusSeconds(30));
        assertThat(silence.cutoff(listening.plusSeconds(41), SUSPECT_AFTER)).contains(listening.plusSeconds(31));
    }

    @Test
    void anOutageBeforeTheWebServerListensDoesNotOpenTheWindowEarly() {
        ObservedSilence silence = new ObservedSilence(GAP, realTime::get);
        silence.failed();
        silence.reached(T0);
        silence.listening(T0.plusSeconds(20));
        assertThat(silence.cutoff(T0.plusSeconds(25), SUSPECT_AFTER)).isEmpty();
        assertThat(silence.cutoff(T0.plusSeconds(31), SUSPECT_AFTER)).contains(T0.plusSeconds(21));
    }

    @Test
    void aDatabaseThatHungLongerThanTheGapEndsTheWatchedTimeAtItsFirstAnswer() {
        ObservedSilence silence = new ObservedSilence(GAP, realTime::get);
        silence.listening(T0.minusSeconds(120));
        silence.reached(T0);
        // the next sweep's first statement hangs for 90 s: no sweep fails, none reaches the database
        realTime.addAndGet(Duration.ofSeconds(90).toNanos());
        Instant answered = T0.plusSeconds(90);
        silence.reached(answered);
        assertThat(silence.cutoff(answered, SUSPECT_AFTER)).isEmpty();
        assertThat(silence.cutoff(answered.plusSeconds(9), SUSPECT_AFTER)).isEmpty();
        assertThat(silence.cutoff(answered.plusSeconds(11), SUSPECT_AFTER)).contains(answered.plusSeconds(1));
        assertThat(silence.cutoff(answered.plusSeconds(59), LOST_AFTER)).isEmpty();
        assertThat(silence.cutoff(answered.plusSeconds(61), LOST_AFTER)).contains(answered.plusSeconds(1));
    }

    @Test
    void sweepsAtTheirUsualPaceAreNoGapHoweverFarTheClockMoves() {
        ObservedSilence silence = new ObservedSilence(GAP, realTime::get);
        silence.listening(T0.minusSeconds(120));
        for (int i = 0; i <= 90; i++) {
            // one sweep a (real) second while the injected clock jumps ahead, as tests move it
            silence.reached(T0.plusSeconds(i));
            realTime.addAndGet(Duration.ofSeconds(1).toNanos());
        }
        silence.reached(T0.plusSeconds(200));
        assertThat(silence.cutoff(T0.plusSeconds(200), LOST_AFTER)).contains(T0.plusSeconds(140));
        // exactly the gap is still watched; a nanosecond more is not
        realTime.addAndGet(GAP.toNanos());
        silence.reached(T0.plusSeconds(201));
        assertThat(silence.cutoff(T0.plusSeconds(201), SUSPECT_AFTER)).contains(T0.plusSeconds(191));
        realTime.addAndGet(GAP.toNanos() + 1);
        silence.reached(T0.plusSeconds(202));
        assertThat(silence.cutoff(T0.plusSeconds(202), SUSPECT_AFTER)).isEmpty();
    }

    @Test
    void aWallClockThatSteppedBackKeepsTheTimeTheWindowHadWatched() {
        ObservedSilence silence = new ObservedSilence(GAP, realTime::get);
        silence.listening(T0);
        silence.failed();
        silence.reached(T0.plusSeconds(3600)); // watched from here
        silence.reached(T0.plusSeconds(3630)); // for 30 s
        // the clock is stepped back an hour: the window keeps its 30 s instead of starting in the future
        Instant back = T0.plusSeconds(35);
        silence.reached(back);
        assertThat(silence.cutoff(back, SUSPECT_AFTER)).contains(back.minusSeconds(10));
        assertThat(silence.cutoff(back, LOST_AFTER)).isEmpty();
        assertThat(silence.cutoff(back.plusSeconds(30), LOST_AFTER)).contains(back.minusSeconds(30));
        // a failed sweep before the step still starts the window again at the next answer
        silence.failed();
        silence.reached(back.minusSeconds(20));
        assertThat(silence.cutoff(back.minusSeconds(11), SUSPECT_AFTER)).isEmpty();
        assertThat(silence.cutoff(back.minusSeconds(9), SUSPECT_AFTER)).contains(back.minusSeconds(19));
    }

    @Test
    void theUnwatchedGapIsHalfOfSuspectAfterAndAtLeastThreeSweepIntervals() {
        assertThat(ObservedSilence.gapFor(SUSPECT_AFTER, Duration.ofSeconds(1))).isEqualTo(Duration.ofSeconds(5));
        assertThat(ObservedSilence.gapFor(Duration.ofSeconds(2), Duration.ofSeconds(1)))
                .isEqualTo(Duration.ofSeconds(3));
    }
}
