package io.kvreuse.admin;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * A fixed-size ring of overview samples, read as columns (the shape uPlot plots). The sampler
 * writes from one thread while pages read, so access is synchronised; the ring is small.
 */
final class TimeSeries {

    /** The plotted series, in column order after the time column. */
    static final List<String> SERIES = List.of(
            "hintsPerSec",
            "noHintsPerSec",
            "latencyP50Ms",
            "latencyP99Ms",
            "bytesPerSec",
            "predictedGainMs",
            "realisedGainMs");

    private final Sample[] ring;
    private int next;
    private int size;

    TimeSeries(int capacity) {
        this.ring = new Sample[capacity];
    }

    synchronized void add(Sample sample) {
        ring[next] = sample;
        next = (next + 1) % ring.length;
        size = Math.min(size + 1, ring.length);
    }

    /** Columns: {@code t} (epoch seconds) then one array per series, oldest first; null = no data. */
    synchronized Map<String, List<@Nullable Double>> columns() {
        Map<String, List<@Nullable Double>> out = new LinkedHashMap<>();
        out.put("t", new ArrayList<>(size));
        SERIES.forEach(s -> out.put(s, new ArrayList<>(size)));
        for (int i = 0; i < size; i++) {
            Sample s = ring[(next - size + i + ring.length) % ring.length];
            out.get("t").add((double) s.epochSecond());
            for (int k = 0; k < SERIES.size(); k++) {
                out.get(SERIES.get(k)).add(s.values()[k]);
            }
        }
        return out;
    }

    synchronized @Nullable Sample latest() {
        return size == 0 ? null : ring[(next - 1 + ring.length) % ring.length];
    }

    /** One point of every series, values in {@link #SERIES} order. */
    record Sample(long epochSecond, @Nullable Double[] values) {}
}
