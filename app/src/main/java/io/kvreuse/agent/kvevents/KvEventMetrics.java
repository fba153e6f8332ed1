package io.kvreuse.agent.kvevents;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

/** Every decision of the bridge, as {@code kvreuse_agent_kv_events_*} meters (base units). */
final class KvEventMetrics {

    final Counter engineBatches;
    final Counter received;
    final Counter forwarded;
    final Counter malformed;
    final Counter malformedBatches;
    final Counter offGpu;
    final Counter unmapped;
    final Counter refused;
    final Counter gaps;
    final Counter replayed;
    final Counter gapsUnrecovered;
    final Counter gapsRecorded;
    final Counter restarts;
    final Counter awaitingSnapshot;
    final Counter retries;
    final Counter resets;
    final Counter restartedSubscribers;
    final Timer post;

    KvEventMetrics(MeterRegistry registry) {
        engineBatches = counter(registry, "engine.batches", "engine batches (ZMQ messages) received", "batches");
        received = counter(registry, "received", "events decoded from engines' streams", "events");
        forwarded = counter(registry, "forwarded", "events the control plane applied (durable)", "events");
        malformed = counter(registry, "malformed", "events that could not be decoded (siblings kept)", "events");
        malformedBatches = counter(
                registry,
                "malformed.batches",
                "payloads that are no batch at all (the rank needs a snapshot)",
                "batches");
        offGpu = counter(registry, "ignored.medium", "events about a medium other than GPU (ignored)", "events");
        unmapped = counter(
                registry, "unmapped", "stored events that name no bank slots, or slots outside the bank", "events");
        refused = counter(registry, "refused", "events the control plane refused as invalid, one by one", "events");
        gaps = counter(registry, "gaps", "sequence gaps seen (a replay was asked for)", "gaps");
        replayed = counter(registry, "replayed", "engine batches recovered through the replay socket", "batches");
        gapsUnrecovered = counter(
                registry, "gaps.unrecovered", "gaps the replay could not fill (the rank needs a snapshot)", "gaps");
        gapsRecorded = counter(
                registry,
                "gaps.recorded",
                "gaps the replay filled, reported to the control plane for its audit trail",
                "gaps");
        restarts = counter(
                registry, "restarts", "backwards sequences: engine restarts (the rank needs a snapshot)", "restarts");
        awaitingSnapshot = counter(
                registry, "awaiting.snapshot", "engine batches dropped while their rank awaits a snapshot", "batches");
        retries = counter(registry, "retries", "calls to the control plane retried after no answer or a 5xx", "calls");
        resets = counter(registry, "bank.resets", "bank resets asked for by a stream's AllBlocksCleared", "resets");
        restartedSubscribers = counter(
                registry,
                "subscribers.restarted",
                "stream subscribers that stopped on an error and were started again",
                "subscribers");
        post = Timer.builder("kvreuse.agent.kv.events.post")
                .description("time to apply one forwarded batch durably on the control plane")
                .publishPercentiles(0.5, 0.99)
                .register(registry);
    }

    private static Counter counter(MeterRegistry registry, String name, String description, String unit) {
        return Counter.builder("kvreuse.agent.kv.events." + name)
                .description(description)
                .baseUnit(unit)
                .register(registry);
    }
}
