package io.kvreuse.admin;

import io.micrometer.core.instrument.distribution.CountAtBucket;
import io.micrometer.core.instrument.distribution.HistogramSnapshot;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * Quantiles of what a timer saw between two snapshots, from its cumulative histogram buckets: the
 * upper bound of the first bucket holding the q-th observation of the interval.
 */
final class HistogramDelta {

    private HistogramDelta() {}

    /** The q-quantile in milliseconds, or null when the interval saw nothing. */
    static @Nullable Double quantileMs(HistogramSnapshot before, HistogramSnapshot after, double q) {
        CountAtBucket[] b = before.histogramCounts();
        CountAtBucket[] a = after.histogramCounts();
        // a registry that resets between steps already gives the interval's own counts
        boolean cumulative = b.length == a.length && after.count() >= before.count();
        for (int i = 0; cumulative && i < a.length; i++) {
            cumulative = a[i].count() >= b[i].count();
        }
        long total = cumulative ? after.count() - before.count() : after.count();
        if (total <= 0 || a.length == 0) {
            return null;
        }
        double wanted = Math.ceil(q * total);
        for (int i = 0; i < a.length; i++) {
            double seen = cumulative ? a[i].count() - b[i].count() : a[i].count();
            if (seen >= wanted) {
                return a[i].bucket(TimeUnit.MILLISECONDS);
            }
        }
        // beyond the largest bucket: report its bound, a lower limit
        return a[a.length - 1].bucket(TimeUnit.MILLISECONDS);
    }
}
