package io.kvreuse.protocol;

/** A part's progress as reported by the agent. UNCERTAIN: may still be writing; QUIESCED: proven stopped. */
public enum PartState {
    RUNNING,
    DONE,
    FAILED,
    UNCERTAIN,
    QUIESCED;

    /** No later report for this part follows. */
    public boolean isFinal() {
        return this == DONE || this == FAILED || this == QUIESCED;
    }
}
