package io.kvreuse.support;

import io.kvreuse.incarnation.LivenessSweeper;
import io.kvreuse.orders.AgentLivenessSweeper;
import java.time.Duration;

/**
 * Time the replica did not watch, for the tests of what a liveness sweeper does after it. The ticker
 * is shared, so each sweeper starts its window again at its next sweep, whichever test runs it; a
 * test that moved the ticker settles both before it ends, so that every later test finds windows
 * longer than any silence it waits for.
 */
public final class UnwatchedTime {

    /** Longer than any liveness window the tests use (lost-after and offline-after are 60 s). */
    private static final Duration LONGEST_WINDOW = Duration.ofSeconds(61);

    private UnwatchedTime() {}

    /** Both sweepers sweep (their windows start again now), then the windows pass. */
    public static void settle(MutableClock clock, LivenessSweeper engines, AgentLivenessSweeper agents) {
        engines.sweepOnce().block(Duration.ofSeconds(30));
        agents.sweepOnce().block(Duration.ofSeconds(30));
        clock.advance(LONGEST_WINDOW);
        engines.sweepOnce().block(Duration.ofSeconds(30));
        agents.sweepOnce().block(Duration.ofSeconds(30));
    }
}
