package io.kvreuse.agent;

import io.kvreuse.transfer.TransferLane;
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

    /** Parts by the lane UCX moved them on: EMULATED for GPU memory means 0.3–0.7 GB/s instead of TB/s. */
    void done(long bytes, Duration duration, TransferLane lane) {
        Counter.builder("kvreuse.agent.transfer.lane")
                .description("completed transfer parts by the lane their bytes took")
                .tag("lane", lane.name())
                .register(registry)
                .increment();
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
