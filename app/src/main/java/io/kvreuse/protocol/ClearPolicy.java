package io.kvreuse.protocol;

/** What an engine stream's "all blocks cleared" event means for the bank it feeds. */
public enum ClearPolicy {
    /** The stream is the engine's native prefix cache: a clear is counted, the retained bank keeps its blocks. */
    NATIVE_CACHE_CLEARED,
    /** The stream is the retained bank's own: a clear is a bank-wide reset (the bank epoch rises). */
    BANK_RESET
}
