package io.kvreuse.error;

/** What went wrong, in domain terms, and the one HTTP status each kind is answered with. */
public enum ProblemKind {
    /** The request is malformed or a field is out of range (400). */
    INVALID(400),
    /** The addressed thing does not exist or is not visible to the caller (404). */
    NOT_FOUND(404),
    /** The caller may not do this (403). */
    FORBIDDEN(403),
    /** The current state, epoch or ownership conflicts with the request (409). */
    CONFLICT(409),
    /** The request is well formed but refused by a domain rule (422). */
    REFUSED(422),
    /** A dependency (database, agent) is temporarily unavailable (503, retryable). */
    UNAVAILABLE(503);

    /** Base of every problem {@code type} URI; the slug after it is stable per problem kind. */
    public static final String TYPE_BASE = "https://kvreuse.io/problems/";

    private final int status;

    ProblemKind(int status) {
        this.status = status;
    }

    /** The HTTP status this kind is answered with. */
    public int status() {
        return status;
    }
}
