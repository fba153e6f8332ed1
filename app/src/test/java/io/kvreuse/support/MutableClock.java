package io.kvreuse.support;

import io.kvreuse.config.Ticker;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A clock tests move by hand; it starts at the real time so database defaults stay close. It is the
 * application's {@link Ticker} too, which moves only through {@link #advanceUnwatched}: time that
 * {@link #advance} moves passes as if the replica's sweeps had kept their pace through it.
 */
public final class MutableClock extends Clock implements Ticker {

    private final AtomicReference<Instant> now = new AtomicReference<>(Instant.now());
    private final AtomicLong nanos = new AtomicLong();

    @Override
    public ZoneId getZone() {
        return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
        return this;
    }

    @Override
    public Instant instant() {
        return now.get();
    }

    public void advance(Duration d) {
        now.updateAndGet(t -> t.plus(d));
    }

    /** Time passes with the replica standing still, as in a database hang or a frozen VM: both clocks move. */
    public void advanceUnwatched(Duration d) {
        nanos.addAndGet(d.toNanos());
        advance(d);
    }

    @Override
    public long nanos() {
        return nanos.get();
    }

    public void reset() {
        now.set(Instant.now());
    }
}
