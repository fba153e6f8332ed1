package io.kvreuse.agent;

import java.time.Instant;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

/**
 * {@code nixl}: UP while every GPU's NIXL agent is open. The control-plane session is shown, not
 * judged: an agent waiting for a restarting control plane is healthy and will resume by itself.
 */
final class NixlHealthIndicator implements HealthIndicator {

    private final GpuAgents gpus;
    private final AgentSession session;
    private final AgentRuntime runtime;
    private final String library;

    NixlHealthIndicator(GpuAgents gpus, AgentSession session, AgentRuntime runtime, String library) {
        this.gpus = gpus;
        this.session = session;
        this.runtime = runtime;
        this.library = library;
    }

    @Override
    public Health health() {
        Instant lastPoll = runtime.lastPoll();
        Health.Builder health = gpus.allOpen() ? Health.up() : Health.down();
        return health.withDetail("library", library)
                .withDetail("agents", gpus.names())
                .withDetail("agentEpoch", session.currentEpoch())
                .withDetail("registrations", session.registrations())
                .withDetail("lastOrderPoll", lastPoll == null ? "never" : lastPoll.toString())
                .build();
    }
}
