package io.kvreuse.error;

/** What went wrong, in domain terms; {@code io.kvreuse.web} maps each kind to one HTTP status. */
public enum ProblemKind {
    /** The request is malformed or a field is out of range (400). */
    INVALID,
    /** The addressed thing does not exist or is not visible to the caller (404). */
    NOT_FOUND,
    /** The caller may not do this (403). */
    FORBIDDEN,
    /** The current state, epoch or ownership conflicts with the request (409). */
    CONFLICT,
    /** The request is well formed but refused by a domain rule (422). */
    REFUSED,
    /** A dependency (database, agent) is temporarily unavailable (503, retryable). */
    UNAVAILABLE
}
