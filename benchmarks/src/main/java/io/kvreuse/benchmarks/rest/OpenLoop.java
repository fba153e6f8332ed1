package io.kvreuse.benchmarks.rest;

import io.kvreuse.testkit.KvReuseClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Function;
import java.util.function.IntFunction;

/**
 * An open-loop load generator: requests leave at fixed intervals whether or not earlier ones have
 * answered, and each latency is measured from the request's intended start, so a stall is counted
 * in full (no coordinated omission).
 */
final class OpenLoop {

    private OpenLoop() {}

    /** Latencies in microseconds, sorted, and what the answers were. */
    record Result(long[] micros, int sent, int errors, Map<String, Integer> outcomes, double seconds) {

        long percentile(double p) {
            if (micros.length == 0) {
                return -1;
            }
            int i = (int) Math.ceil(p / 100.0 * micros.length) - 1;
            return micros[Math.max(0, Math.min(micros.length - 1, i))];
        }

        String summary(String name) {
            return String.format(
                    "%-24s rate %6.0f/s  p50 %6d µs  p90 %6d µs  p99 %6d µs  p99.9 %6d µs  max %7d µs  errors %d  %s",
                    name,
                    sent / seconds,
                    percentile(50),
                    percentile(90),
                    percentile(99),
                    percentile(99.9),
                    micros.length == 0 ? -1 : micros[micros.length - 1],
                    errors,
                    outcomes);
        }
    }

    static Result run(
            KvReuseClient http,
            int ratePerSecond,
            double seconds,
            IntFunction<HttpRequest> requests,
            Function<HttpResponse<String>, String> outcome)
            throws InterruptedException {
        int total = (int) (ratePerSecond * seconds);
        long interval = TimeUnit.SECONDS.toNanos(1) / ratePerSecond;
        long[] latencies = new long[total];
        Arrays.fill(latencies, Long.MAX_VALUE);
        AtomicInteger errors = new AtomicInteger();
        Map<String, LongAdder> outcomes = new ConcurrentHashMap<>();
        CountDownLatch done = new CountDownLatch(total);
        long start = System.nanoTime();
        for (int i = 0; i < total; i++) {
            long intended = start + i * interval;
            long wait;
            while ((wait = intended - System.nanoTime()) > 0) {
                LockSupport.parkNanos(Math.min(wait, 50_000));
            }
            int slot = i;
            http.sendAsync(requests.apply(i)).whenComplete((response, failure) -> {
                latencies[slot] = (System.nanoTime() - intended) / 1_000;
                if (failure != null || response.statusCode() >= 400) {
                    errors.incrementAndGet();
                } else {
                    outcomes.computeIfAbsent(outcome.apply(response), k -> new LongAdder())
                            .increment();
                }
                done.countDown();
            });
        }
        done.await(60, TimeUnit.SECONDS);
        double elapsed = (System.nanoTime() - start) / 1e9;
        long[] sorted = Arrays.stream(latencies)
                .filter(l -> l != Long.MAX_VALUE)
                .sorted()
                .toArray();
        Map<String, Integer> counts = new java.util.TreeMap<>();
        outcomes.forEach((k, v) -> counts.put(k, v.intValue()));
        return new Result(sorted, total, errors.get() + (total - sorted.length), counts, Math.max(elapsed, seconds));
    }
}
