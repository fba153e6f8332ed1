package io.kvreuse.orders;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Liveness of node agents, as seen from their heartbeats ({@code kvreuse.agents.*}).
 *
 * @param suspectAfter an ONLINE agent silent this long becomes SUSPECT (default 15s)
 * @param offlineAfter an agent silent this long becomes OFFLINE (default 60s)
 * @param sweepInterval how often the (single, elected) sweeper looks (default 1s)
 */
@ConfigurationProperties("kvreuse.agents")
record AgentLivenessProperties(Duration suspectAfter, Duration offlineAfter, Duration sweepInterval) {

    AgentLivenessProperties {
        suspectAfter = suspectAfter == null ? Duration.ofSeconds(15) : suspectAfter;
        offlineAfter = offlineAfter == null ? Duration.ofSeconds(60) : offlineAfter;
        sweepInterval = sweepInterval == null ? Duration.ofSeconds(1) : sweepInterval;
        if (!offlineAfter.minus(suspectAfter).isPositive()) {
            throw new IllegalArgumentException("kvreuse.agents.offline-after must be longer than suspect-after");
        }
    }
}
