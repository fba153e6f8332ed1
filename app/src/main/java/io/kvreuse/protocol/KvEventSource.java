package io.kvreuse.protocol;

import java.util.List;
import java.util.UUID;
import org.jspecify.annotations.Nullable;

/**
 * An engine's KV event source as its host's agent reads it ({@code GET /api/v1/agents/{hostId}/event-sources}):
 * where each rank publishes, and where the rank's ingestion stands, so a restarted agent resumes there.
 *
 * @param revision rises whenever the owner changes the source; the agent resubscribes on a new one
 */
public record KvEventSource(
        UUID bankId,
        UUID incarnationId,
        long bankEpoch,
        int capacityBlocks,
        KvEventFormat format,
        ClearPolicy allBlocksCleared,
        long revision,
        List<Stream> streams) {

    /**
     * One rank's stream and its ingestion state.
     *
     * @param eventsStarted whether any event was applied yet (until then the rank accepts ids from 0 or 1)
     * @param sourceSequence the engine sequence of the last engine batch applied; null when none was
     */
    public record Stream(
            int rank,
            String endpoint,
            @Nullable String replayEndpoint,
            @Nullable String topic,
            long appliedThroughEventId,
            boolean eventsStarted,
            @Nullable Long sourceSequence,
            boolean needsSnapshot) {}
}
