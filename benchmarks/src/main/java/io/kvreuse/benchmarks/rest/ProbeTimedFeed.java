package io.kvreuse.benchmarks.rest;

import io.kvreuse.agent.kvevents.InventoryFeed;
import io.kvreuse.protocol.KvEventSource;
import io.kvreuse.protocol.StreamBreak;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.UUID;
import org.jspecify.annotations.Nullable;

/**
 * The bridge's feed with the lag probe's posts timed: when a post carries the probe chain's first
 * hash, the rank's post start and end are kept, so the lag phase can say how much of a probe's lag
 * is before its post, in its post, and after both ranks' posts (the feed row reaching the index,
 * plus the router's poll).
 */
final class ProbeTimedFeed implements InventoryFeed {

    private final InventoryFeed delegate;
    private volatile byte @Nullable [] marker;
    /** Per rank of the probed bank: post start, post end (System.nanoTime), 0 until seen. */
    final long[] started = new long[RestBenchmark.TP];

    final long[] ended = new long[RestBenchmark.TP];

    ProbeTimedFeed(InventoryFeed delegate) {
        this.delegate = delegate;
    }

    /** Whether every rank's post of the current probe was answered. */
    synchronized boolean allEnded() {
        for (long e : ended) {
            if (e == 0) {
                return false;
            }
        }
        return true;
    }

    /** The next probe: its first hash as the events carry it (decimal). */
    synchronized void expect(long firstHash) {
        java.util.Arrays.fill(started, 0);
        java.util.Arrays.fill(ended, 0);
        marker = ("\"" + Long.toUnsignedString(firstHash) + "\"").getBytes(StandardCharsets.US_ASCII);
    }

    @Override
    public List<KvEventSource> sources() throws FeedException {
        return delegate.sources();
    }

    @Override
    public long post(UUID bankId, int rank, long firstEventId, List<byte[]> events, @Nullable Long sourceSequence)
            throws FeedException {
        byte[] m = marker;
        boolean probe = m != null && rank < started.length && events.stream().anyMatch(e -> contains(e, m));
        long start = System.nanoTime();
        long applied = delegate.post(bankId, rank, firstEventId, events, sourceSequence);
        if (probe) {
            synchronized (this) {
                if (started[rank] == 0) {
                    started[rank] = start;
                    ended[rank] = System.nanoTime();
                }
            }
        }
        return applied;
    }

    @Override
    public void streamBroke(UUID bankId, int rank, StreamBreak report) throws FeedException {
        delegate.streamBroke(bankId, rank, report);
    }

    @Override
    public void reset(UUID bankId, long ifEpoch) throws FeedException {
        delegate.reset(bankId, ifEpoch);
    }

    private static boolean contains(byte[] haystack, byte[] needle) {
        outer:
        for (int i = 0; i <= haystack.length - needle.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (haystack[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return true;
        }
        return false;
    }
}
