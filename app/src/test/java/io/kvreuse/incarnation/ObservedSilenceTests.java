package io.kvreuse.incarnation;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class ObservedSilenceTests {

    private static final Instant T0 = Instant.parse("2026-11-30T00:00:00Z");
    private static final Duration SUSPECT_AFTER = Duration.ofSeconds(10);
    private static final Duration LOST_AFTER = Duration.ofSeconds(60);

    @Test
    void withoutAnOutageSilenceIsMeasuredFromTheHeartbeat() {
        ObservedSilence silence = new ObservedSilence();
        silence.listening(T0.minusSeconds(120));
        silence.reached(T0);
        assertThat(silence.cutoff(T0.plusSeconds(30), SUSPECT_AFTER)).contains(T0.plusSeconds(20));
        assertThat(silence.cutoff(T0.plusSeconds(30), LOST_AFTER)).contains(T0.minusSeconds(30));
    }

    @Test
    void nobodyIsJudgedSilentDuringAnOutageNorUntilTheWindowPassedAfterIt() {
        ObservedSilence silence = new ObservedSilence();
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
        ObservedSilence silence = new ObservedSilence();
        silence.listening(T0.minusSeconds(120));
        silence.failed();
        silence.reached(T0);
        silence.reached(T0.plusSeconds(5)); // a later successful sweep does not move the window
        assertThat(silence.cutoff(T0.plusSeconds(11), SUSPECT_AFTER)).contains(T0.plusSeconds(1));
    }

    @Test
    void aReplicaJudgesNobodyBeforeItCouldHearHeartbeatsNorUntilTheWindowPassedSinceThen() {
        ObservedSilence silence = new ObservedSilence();
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
        ObservedSilence silence = new ObservedSilence();
        silence.failed();
        silence.reached(T0);
        silence.listening(T0.plusSeconds(20));
        assertThat(silence.cutoff(T0.plusSeconds(25), SUSPECT_AFTER)).isEmpty();
        assertThat(silence.cutoff(T0.plusSeconds(31), SUSPECT_AFTER)).contains(T0.plusSeconds(21));
    }
}
