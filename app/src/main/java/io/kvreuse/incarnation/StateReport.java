package io.kvreuse.incarnation;

import java.util.UUID;

/** The answer to an engine's heartbeat, drain or exit: where its incarnation stands now. */
public record StateReport(UUID incarnationId, IncarnationState state, long fencingEpoch) {}
