package io.kvreuse.error;

/** A request that breaks a validation rule (400); each rule has its own entry in the catalogue. */
public class InvalidRequestException extends KvReuseException {

    public InvalidRequestException(ProblemType type, String detail) {
        super(type, detail);
        if (type.status() != 400) {
            throw new IllegalArgumentException(type + " is not a 400 problem");
        }
    }
}
