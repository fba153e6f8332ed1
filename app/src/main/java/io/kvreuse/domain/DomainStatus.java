package io.kvreuse.domain;

/** Whether a layout domain may be used for new reuse. */
public enum DomainStatus {
    /** Certified by an operator: engines may register in it and new leases may be granted. */
    CERTIFIED,
    /** Revoked: stays readable, no new registrations or leases; existing leases run out. */
    REVOKED
}
