package io.kvreuse.index;

import java.util.UUID;

/**
 * A published bank holding the request's chain {@code h[0..coveredBlocks)} from the root, as of
 * one committed state of that bank (never half a batch).
 */
public record Candidate(UUID bankId, long bankEpoch, int coveredBlocks) {}
