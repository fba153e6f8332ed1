package io.kvreuse.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * {@code POST /api/v1/banks/{bankId}/events} as the agent sends it when it bridges an engine's own
 * stream: hashes as unsigned decimal strings, positions left out where the agent does not know them.
 *
 * @param sourceSequence the engine sequence of the last engine batch this one completes
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record InventoryBatch(
        int rank,
        long firstEventId,
        List<Event> events,
        @Nullable Long sourceSequence) {

    /** One event: STORED with blocks, REMOVED with seqHashes, or NATIVE_CACHE_CLEARED. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Event(
            String type,
            @Nullable List<Block> blocks,
            @Nullable List<String> seqHashes) {}

    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Block(
            String seqHash,
            @Nullable String parentHash,
            @Nullable Integer position,
            int slot) {}
}
