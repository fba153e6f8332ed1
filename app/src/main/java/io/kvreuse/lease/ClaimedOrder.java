package io.kvreuse.lease;

import java.util.UUID;

/** A transfer order the host's agent just claimed: its lease, the hosts at both ends, and how often it was claimed. */
public record ClaimedOrder(UUID orderId, UUID leaseId, String hostId, String donorHost, int claims) {}
