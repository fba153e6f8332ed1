package io.kvreuse.protocol;

/**
 * {@code POST /api/v1/banks/{bankId}/parts/{rank}/stream-breaks}: the agent lost events of a rank's
 * stream that no replay can return, so the rank needs a snapshot.
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
        RESTART
    }
}
