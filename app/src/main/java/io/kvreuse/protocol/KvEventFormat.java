package io.kvreuse.protocol;

/** The wire format of an engine's own KV event stream (docs/kv-events.md). */
public enum KvEventFormat {
    /** vLLM's KVEvents (also emitted by SGLang and LMCache): sequence from 0, positional or map encoding. */
    VLLM_KV_EVENTS,
    /** Mooncake's KV event RFC #1527: sequence and event ids from 1, events as maps. */
    MOONCAKE_RFC1527
}
