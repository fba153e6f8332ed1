package io.kvreuse.lease;

/** A transfer part's state: QUEUED until the agent reports; DONE, FAILED and QUIESCED are final. */
enum PartState {
    QUEUED,
    RUNNING,
    DONE,
    FAILED,
    UNCERTAIN,
    QUIESCED;

    /** No later report for this part follows: nothing can still be writing it. */
    boolean isFinal() {
        return this == DONE || this == FAILED || this == QUIESCED;
    }
}
