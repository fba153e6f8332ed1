package io.kvreuse.incarnation;

import java.time.Instant;
import java.util.List;
import java.util.UUID;
import org.jspecify.annotations.Nullable;

/** An engine incarnation as stored, with its rank parts ordered by rank. */
public record IncarnationView(
        UUID incarnationId,
        @Nullable String stableName,
        EngineRole role,
        String domainId,
        String hostId,
        @Nullable String fabricDomain,
        String controlEndpoint,
        List<String> capabilities,
        IncarnationState state,
        long fencingEpoch,
        String ownerSubject,
        Instant registeredAt,
        Instant lastHeartbeatAt,
        Instant stateChangedAt,
        List<Rank> ranks) {

    public IncarnationView {
        capabilities = List.copyOf(capabilities);
        ranks = List.copyOf(ranks);
    }

    public int tpSize() {
        return ranks.size();
    }

    public boolean hasCapability(String capability) {
        return capabilities.contains(capability);
    }

    /** One TP rank: its GPU on the incarnation's host; {@code live} until a clean exit or reclaim. */
    public record Rank(int rank, int gpuOrdinal, String gpuUuid, boolean live) {}
}
