package io.kvreuse.store;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;

/**
 * Group commit: requests that arrive while {@code writers} groups are in flight queue, and the next
 * free writer runs up to {@code maxGroup} of them, in arrival order, as one group ({@code run}
 * answers one output per input, in order, in one transaction). Alone, a request starts its group at
 * once. Should a group fail, each of its requests runs again alone, in order, so one bad request
 * fails only its own caller. A request submitted with a time to start by ({@link #submit(Object,
 * long)}) that is still queued past it is not run: it completes empty.
 */
public final class GroupCommit<I, O> {

    private record Pending<I, O>(I input, long startBy, MonoSink<O> done) {}

    private final Function<List<I>, Mono<List<O>>> run;
    private final int writers;
    private final int maxGroup;
    private final Queue<Pending<I, O>> queue = new ConcurrentLinkedQueue<>();
    private final AtomicInteger running = new AtomicInteger();
    // System.nanoTime() of the last group that started while none ran, or that ended
    private final AtomicLong lastProgress = new AtomicLong(System.nanoTime());

    public GroupCommit(int writers, int maxGroup, Function<List<I>, Mono<List<O>>> run) {
        this.run = run;
        this.writers = writers;
        this.maxGroup = maxGroup;
    }

    public Mono<O> submit(I input) {
        return submit(input, Long.MAX_VALUE);
    }

    /**
     * Runs {@code input} in a group, unless it is still queued at {@code startByNanos} ({@link
     * System#nanoTime()}): then it completes empty without running.
     */
    public Mono<O> submit(I input, long startByNanos) {
        return Mono.create(sink -> {
            queue.add(new Pending<>(input, startByNanos, sink));
            drain();
        });
    }

    /** Whether a group has been in flight for {@code after} without any group ending. */
    public boolean stalled(Duration after) {
        return (running.get() > 0 || !queue.isEmpty()) && System.nanoTime() - lastProgress.get() > after.toNanos();
    }

    private void drain() {
        while (!queue.isEmpty()) {
            int n = running.get();
            if (n >= writers) {
                return;
            }
            if (!running.compareAndSet(n, n + 1)) {
                continue;
            }
            if (n == 0) {
                lastProgress.set(System.nanoTime());
            }
            List<Pending<I, O>> group = new ArrayList<>();
            long now = System.nanoTime();
            for (Pending<I, O> next = queue.poll();
                    next != null;
                    next = group.size() < maxGroup ? queue.poll() : null) {
                if (next.startBy() != Long.MAX_VALUE && now - next.startBy() > 0) {
                    next.done().success();
                } else {
                    group.add(next);
                }
            }
            if (group.isEmpty()) {
                running.decrementAndGet();
                continue;
            }
            run(group)
                    .doFinally(signal -> {
                        lastProgress.set(System.nanoTime());
                        running.decrementAndGet();
                        drain();
                    })
                    .subscribe();
        }
    }

    /** Runs the group and answers each of its requests; never fails itself. */
    private Mono<Void> run(List<Pending<I, O>> group) {
        return Mono.defer(() -> run.apply(group.stream().map(Pending::input).toList()))
                .switchIfEmpty(Mono.error(() -> new IllegalStateException("a group answered nothing")))
                .doOnNext(outputs -> {
                    for (int i = 0; i < group.size(); i++) {
                        group.get(i).done().success(outputs.get(i));
                    }
                })
                .then()
                .onErrorResume(e -> {
                    if (group.size() == 1) {
                        group.getFirst().done().error(e);
                        return Mono.empty();
                    }
                    return Flux.fromIterable(group)
                            .concatMap(g -> run(List.of(g)))
                            .then();
                });
    }
}
