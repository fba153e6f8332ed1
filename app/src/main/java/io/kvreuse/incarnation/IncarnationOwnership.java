package io.kvreuse.incarnation;

import java.util.UUID;

/** Who owns an incarnation and at which epoch: what the command channel checks on every call. */
public record IncarnationOwnership(
        UUID incarnationId, String ownerSubject, String hostId, IncarnationState state, long fencingEpoch) {}
