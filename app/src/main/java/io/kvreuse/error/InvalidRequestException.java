package io.kvreuse.error;

/** A request that breaks a validation rule; each rule has its own stable slug. */
public class InvalidRequestException extends KvReuseException {

    public InvalidRequestException(String slug, String title, String detail) {
        super(ProblemKind.INVALID, slug, title, detail);
    }
}
