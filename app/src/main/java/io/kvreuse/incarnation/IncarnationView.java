package io.kvreuse.incarnation;

import io.swagger.v3.oas.annotations.media.Schema;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import org.jspecify.annotations.Nullable;

/** An engine incarnation as stored, with its rank parts ordered by rank. */
@Schema(description = "An engine incarnation: identity, role, placement, state and ranks")
public record IncarnationView(
        @Schema(description = "The engine incarnation") UUID incarnationId,

        @Schema(description = "A stable, human-readable engine name (DNS style), kept across incarnations") @Nullable
        String stableName,

        @Schema(description = "PREFILL or DECODE") EngineRole role,
        @Schema(description = "The layout domain") String domainId,

        @Schema(description = "The GPU host, as engines and its node agent name it")
        String hostId,

        @Schema(description = "Multi-node NVLink fabric domain, when the host has one") @Nullable
        String fabricDomain,

        @Schema(description = "The engine's control endpoint, tcp://host:port")
        String controlEndpoint,

        @Schema(
                description =
                        "Actions the engine performs, e.g. kv.fetch_gpu@1.0 (a donor and a target both need it for GPU hints)")
        List<String> capabilities,

        @Schema(description = "REGISTERED, READY, DRAINING, SUSPECT, LOST, EXITED or RECLAIMED")
        IncarnationState state,

        @Schema(description = "The current fencing epoch") long fencingEpoch,

        @Schema(description = "Subject of the ENGINE token that registered it")
        String ownerSubject,

        @Schema(description = "When it registered") Instant registeredAt,
        @Schema(description = "Last heartbeat") Instant lastHeartbeatAt,
        @Schema(description = "When the state last changed") Instant stateChangedAt,
        @Schema(description = "One entry per rank") List<Rank> ranks) {

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
    @Schema(name = "IncarnationRank", description = "One rank of an incarnation")
    public record Rank(
            @Schema(description = "Tensor-parallel rank") int rank,
            @Schema(description = "GPU ordinal on its host") int gpuOrdinal,
            @Schema(description = "The GPU's UUID") String gpuUuid,

            @Schema(description = "The rank's GPU is held by this incarnation")
            boolean live) {}
}
