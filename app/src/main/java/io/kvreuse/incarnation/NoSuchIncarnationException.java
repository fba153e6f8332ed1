package io.kvreuse.incarnation;

import io.kvreuse.error.KvReuseException;
import io.kvreuse.error.ProblemType;
import java.util.UUID;

/**
 * The incarnation does not exist or is not the caller's (404 {@code incarnation-not-found}): an
 * engine cannot learn whether another engine's incarnation exists.
 */
public class NoSuchIncarnationException extends KvReuseException {

    public NoSuchIncarnationException(UUID incarnationId) {
        super(ProblemType.INCARNATION_NOT_FOUND, "no incarnation " + incarnationId + " visible to this token");
        with("incarnationId", incarnationId);
    }
}
