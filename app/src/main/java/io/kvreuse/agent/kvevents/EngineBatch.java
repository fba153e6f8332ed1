package io.kvreuse.agent.kvevents;

import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * One engine batch (one ZMQ message) decoded: its events in order, and the problems of those that
 * could not be decoded, each isolated from its siblings.
 */
record EngineBatch(long sequence, @Nullable Integer dpRank, List<KvEvent> events, List<String> malformed) {}
