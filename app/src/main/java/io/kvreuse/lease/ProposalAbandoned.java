package io.kvreuse.lease;

import java.util.UUID;

/**
 * A PROPOSED lease was written although its router had already been answered NO_HINT (the
 * deadline passed while the write was in flight): nobody will use it, so what the donor may pin
 * for it must be let go at once rather than at the lease's deadlines.
 */
public record ProposalAbandoned(UUID leaseId, String reason) {}
