package io.kvreuse.protocol;

/**
 * {@code POST /api/v1/banks/{bankId}/parts/{rank}/stream-breaks}: the agent lost events of a rank's
 * stream that no replay can return, so the rank needs a snapshot ({@link Kind#GAP}, {@link
 * Kind#RESTART}); or the live stream skipped sequences that the replay socket returned, so nothing
 * is lost and the report is for the record only ({@link Kind#REPLAYED}).
 *
 * @param expectedSequence the engine sequence the agent needed next
 * @param receivedSequence the engine sequence it received instead
 */
public record StreamBreak(Kind kind, long expectedSequence, long receivedSequence) {

    /** Why the stream broke. */
    public enum Kind {
        /** Sequences were skipped and the replay could not return them. */
        GAP,
        /** The sequence went backwards: the engine restarted, its earlier entries are stale. */
        RESTART,
        /**
         * Sequences {@code expectedSequence .. receivedSequence - 1} were missing from the live stream
         * and the replay returned every one: audited, the rank keeps its state.
         */
        REPLAYED;

        /** Whether the rank lost events and needs a snapshot. */
        public boolean lost() {
            return this != REPLAYED;
        }
    }
}
