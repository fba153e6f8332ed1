package io.kvreuse.agent;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.function.ToDoubleFunction;

/**
 * What operators watch on an agent: parts by outcome, bytes moved by NIXL, transfer time, and the
 * bytes the agent sent to the control plane — which stay metadata-sized however much KV moves.
 */
final class AgentMetrics {

    private final MeterRegistry registry;
    private final Counter done;
    private final Counter failed;
    private final Counter uncertain;
    private final Counter bytesMoved;
    private final Timer transfer;

    AgentMetrics(MeterRegistry registry) {
        this.registry = registry;
        this.done = parts(registry, "done");
        this.failed = parts(registry, "failed");
        this.uncertain = parts(registry, "uncertain");
        this.bytesMoved = Counter.builder("kvreuse.agent.transfer.bytes")
                .description("KV bytes moved by NIXL for completed parts")
                .baseUnit("bytes")
                .register(registry);
        this.transfer = Timer.builder("kvreuse.agent.transfer.duration")
                .description("post-to-completion time of completed parts")
                .register(registry);
    }

    private static Counter parts(MeterRegistry registry, String outcome) {
        return Counter.builder("kvreuse.agent.parts")
                .description("transfer parts by outcome")
                .tag("outcome", outcome)
                .register(registry);
    }

    <T> void gauge(String name, String description, T source, ToDoubleFunction<T> value) {
        io.micrometer.core.instrument.FunctionCounter.builder(name, source, value)
                .description(description)
                .baseUnit("bytes")
                .register(registry);
    }

    void done(long bytes, Duration duration) {
        done.increment();
        bytesMoved.increment(bytes);
        transfer.record(duration);
    }

    void failed() {
        failed.increment();
    }

    void uncertain() {
        uncertain.increment();
    }
}
