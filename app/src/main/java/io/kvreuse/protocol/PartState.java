package io.kvreuse.protocol;

/**
 * A part's state, the one spelling for the agent, the order queue and the lease: QUEUED until the
 * agent's first report, then what the agent reported. UNCERTAIN: may still be writing; QUIESCED:
 * proven stopped. Agents never report QUEUED.
 */
public enum PartState {
    QUEUED,
    RUNNING,
    DONE,
    FAILED,
    UNCERTAIN,
    QUIESCED;

    /** No later report for this part follows. */
    public boolean isFinal() {
        return this == DONE || this == FAILED || this == QUIESCED;
    }

    /** An agent may report this state (every state but QUEUED). */
    public boolean isReportable() {
        return this != QUEUED;
    }
}
