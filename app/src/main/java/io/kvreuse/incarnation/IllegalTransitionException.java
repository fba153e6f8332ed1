package io.kvreuse.incarnation;

import io.kvreuse.error.KvReuseException;
import io.kvreuse.error.ProblemType;
import java.util.UUID;

/** The incarnation's current state does not allow the change (409 {@code illegal-transition}). */
public class IllegalTransitionException extends KvReuseException {

    public IllegalTransitionException(UUID id, IncarnationState current, IncarnationState wanted) {
        super(ProblemType.ILLEGAL_TRANSITION, "incarnation " + id + " is " + current + " and cannot move to " + wanted);
        with("incarnationId", id);
        with("currentState", current);
        with("requestedState", wanted);
    }
}
