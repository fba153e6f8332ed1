package io.kvreuse.benchmarks.rest;

import io.kvreuse.testkit.KvReuseClient;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The control plane's own selection-latency histogram ({@code kvreuse_selection_latency_seconds}
 * buckets from {@code /actuator/prometheus}), to separate server time from the load generator's.
 * Percentiles are bucket upper bounds: "at most".
 */
record ServerHistogram(TreeMap<Double, Long> cumulative) {

    private static final Pattern BUCKET = Pattern.compile(
            "^kvreuse_selection_latency_seconds_bucket\\{[^}]*le=\\\"([^\\\"]+)\\\"[^}]*} ([0-9.eE+]+)$",
            Pattern.MULTILINE);

    static ServerHistogram read(KvReuseClient http, String token) throws Exception {
        var r = http.sendAsync(http.request("GET", "/actuator/prometheus", token, null))
                .get();
        TreeMap<Double, Long> buckets = new TreeMap<>();
        Matcher m = BUCKET.matcher(r.body());
        while (m.find()) {
            double le = m.group(1).equals("+Inf") ? Double.POSITIVE_INFINITY : Double.parseDouble(m.group(1));
            buckets.merge(le, (long) Double.parseDouble(m.group(2)), Long::sum);
        }
        return new ServerHistogram(buckets);
    }

    ServerHistogram minus(ServerHistogram earlier) {
        TreeMap<Double, Long> diff = new TreeMap<>();
        for (Map.Entry<Double, Long> e : cumulative.entrySet()) {
            diff.put(e.getKey(), e.getValue() - earlier.cumulative.getOrDefault(e.getKey(), 0L));
        }
        return new ServerHistogram(diff);
    }

    long count() {
        return cumulative.isEmpty() ? 0 : cumulative.lastEntry().getValue();
    }

    double percentileMs(double p) {
        long target = (long) Math.ceil(p / 100.0 * count());
        for (Map.Entry<Double, Long> e : cumulative.entrySet()) {
            if (e.getValue() >= target) {
                return e.getKey() * 1000;
            }
        }
        return Double.NaN;
    }
}
