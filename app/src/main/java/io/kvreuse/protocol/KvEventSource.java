package io.kvreuse.protocol;

import io.swagger.v3.oas.annotations.media.Schema;
import java.util.List;
import java.util.UUID;
import org.jspecify.annotations.Nullable;

/**
 * An engine's KV event source as its host's agent reads it ({@code GET /api/v1/agents/{hostId}/event-sources}):
 * where each rank publishes, and where the rank's ingestion stands, so a restarted agent resumes there.
 *
 * @param revision rises whenever the owner changes the source; the agent resubscribes on a new one
 */
@Schema(
        name = "BankEventSource",
        description = "A bank's KV event source: where each rank's engine publishes and where its ingestion stands")
public record KvEventSource(
        @Schema(description = "The retained bank the events feed")
        UUID bankId,

        @Schema(description = "The decode incarnation that owns the bank")
        UUID incarnationId,

        @Schema(description = "The bank's current epoch (bumped by every reset)")
        long bankEpoch,

        @Schema(description = "Capacity of the bank in blocks per rank")
        int capacityBlocks,

        @Schema(description = "VLLM_KV_EVENTS or MOONCAKE_RFC1527")
        KvEventFormat format,

        @Schema(description = "What AllBlocksCleared means: NATIVE_CACHE_CLEARED or BANK_RESET")
        ClearPolicy allBlocksCleared,

        @Schema(description = "Rises whenever the owner replaces the source; the agent resubscribes on a new one")
        long revision,

        @Schema(description = "One stream per rank, in rank order")
        List<Stream> streams) {

    /**
     * One rank's stream and its ingestion state.
     *
     * @param eventsStarted whether any event was applied yet (until then the rank accepts ids from 0 or 1)
     * @param sourceSequence the engine sequence of the last engine batch applied; null when none was
     */
    @Schema(name = "BankEventStream", description = "One rank's KV event stream and where its ingestion stands")
    public record Stream(
            @Schema(description = "Tensor-parallel rank") int rank,

            @Schema(description = "The ZMQ PUB endpoint the agent subscribes to")
            String endpoint,

            @Schema(description = "The ZMQ ROUTER replay endpoint (absent: the engine offers no replay)") @Nullable
            String replayEndpoint,

            @Schema(description = "The topic subscribed to (absent: every topic)") @Nullable
            String topic,

            @Schema(description = "The last event id applied to the rank (0 before any)")
            long appliedThroughEventId,

            @Schema(description = "Whether any event was applied yet (until then the rank accepts ids from 0 or 1)")
            boolean eventsStarted,

            @Schema(description = "The engine sequence of the last engine batch applied (absent: none yet)") @Nullable
            Long sourceSequence,

            @Schema(description = "The rank lost events and needs a snapshot before it is published again")
            boolean needsSnapshot) {}
}
