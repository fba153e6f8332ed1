package io.kvreuse.agent.kvevents;

import org.jspecify.annotations.Nullable;

/** One decoded engine KV event, format-independent. Hashes are u64 bit patterns. */
sealed interface KvEvent {

    /** Where the event's blocks live; only GPU blocks are in a retained bank. */
    String medium();

    /**
     * Blocks stored, in chain order: {@code hashes[0]}'s parent is {@code parent} (null: a root,
     * unless {@code depth} says otherwise), each later one's parent the one before it.
     *
     * @param depth position of the first block from the root when the stream says it (RFC #1527)
     * @param slots bank slot of each block; null when the event does not say
     */
    record Stored(
            long[] hashes, @Nullable Long parent, @Nullable Integer depth, int @Nullable [] slots, String medium)
            implements KvEvent {}

    record Removed(long[] hashes, String medium) implements KvEvent {}

    record Cleared(String medium) implements KvEvent {}

    /** Whether the event concerns GPU memory (a missing medium means GPU, as engines default it). */
    default boolean onGpu() {
        return medium().isEmpty() || medium().equalsIgnoreCase("GPU");
    }
}
