package io.kvreuse.incarnation;

import io.kvreuse.error.KvReuseException;
import io.kvreuse.error.ProblemKind;
import java.util.UUID;

/**
 * The incarnation does not exist or is not the caller's (404 {@code incarnation-not-found}): an
 * engine cannot learn whether another engine's incarnation exists.
 */
public class NoSuchIncarnationException extends KvReuseException {

    public NoSuchIncarnationException(UUID incarnationId) {
        super(
                ProblemKind.NOT_FOUND,
                "incarnation-not-found",
                "No such incarnation",
                "no incarnation " + incarnationId + " visible to this token");
        with("incarnationId", incarnationId);
    }
}
