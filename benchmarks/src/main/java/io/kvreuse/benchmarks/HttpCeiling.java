package io.kvreuse.benchmarks;

import io.kvreuse.testkit.KvReuseClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The rate a running control plane answers its cheapest authenticated-client request at (a bearer
 * token on {@code GET /actuator/health/liveness}: HTTP, the filter chain, no database), in a closed
 * loop of as many callers as the per-request lease run uses, through the same client. It is the ceiling of that run on the
 * same machine: a lifecycle of {@code n} requests cannot go faster than this rate divided by
 * {@code n}, whatever the lease code costs. Prints one line.
 *
 * <p>Arguments: {@code baseUrl token seconds callers [warmUpSeconds]}.
 */
public final class HttpCeiling {

    private HttpCeiling() {}

    public static void main(String[] args) throws Exception {
        KvReuseClient client = new KvReuseClient(args[0]);
        String token = args[1];
        int seconds = Integer.parseInt(args[2]);
        int callers = Integer.parseInt(args[3]);
        int warmUp = args.length > 4 ? Integer.parseInt(args[4]) : 5;
        long warmEnd = System.nanoTime() + Duration.ofSeconds(warmUp).toNanos();
        long end = warmEnd + Duration.ofSeconds(seconds).toNanos();
        AtomicLong counted = new AtomicLong();
        AtomicLong failed = new AtomicLong();
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < callers; i++) {
            threads.add(Thread.ofVirtual().start(() -> {
                while (System.nanoTime() < end) {
                    boolean ok;
                    try {
                        ok = client.get("/actuator/health/liveness", token).status() == 200;
                    } catch (RuntimeException e) {
                        ok = false;
                    }
                    if (System.nanoTime() >= warmEnd) {
                        (ok ? counted : failed).incrementAndGet();
                    }
                }
            }));
        }
        for (Thread t : threads) {
            t.join();
        }
        System.out.printf(
                "requests=%d failed=%d seconds=%d callers=%d requests_per_s=%.0f%n",
                counted.get(), failed.get(), seconds, callers, counted.get() / (double) seconds);
    }
}
