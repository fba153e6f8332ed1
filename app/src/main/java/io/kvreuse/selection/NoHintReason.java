package io.kvreuse.selection;

/** Why a selection answered without a hint (DESIGN §4 step 7); every reason is a metric. */
public enum NoHintReason {
    DISABLED,
    NOT_PREFILL,
    NOT_CAPABLE,
    DOMAIN_NOT_CERTIFIED,
    NO_COVERAGE,
    DONOR_UNAVAILABLE,
    UNREACHABLE,
    AT_CAPACITY,
    BELOW_MIN_BLOCKS,
    UNPROFITABLE,
    BUDGET,
    DEADLINE,
    STORE_UNAVAILABLE
}
