/**
 * The node agent's bridge from engines' own KV event streams (vLLM KVEvents, Mooncake RFC #1527,
 * over ZMQ) into ordered bank ingestion; depends on {@code io.kvreuse.protocol} only.
 */
@NullMarked
package io.kvreuse.agent.kvevents;

import org.jspecify.annotations.NullMarked;
