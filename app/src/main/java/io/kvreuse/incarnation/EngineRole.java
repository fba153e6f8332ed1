package io.kvreuse.incarnation;

/** What an engine does in disaggregated serving. */
public enum EngineRole {
    /** Computes prompts' KV; the target of a D→P fetch. */
    PREFILL,
    /** Generates tokens and retains KV banks; the donor of a D→P fetch. */
    DECODE
}
