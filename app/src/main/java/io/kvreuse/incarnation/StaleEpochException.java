package io.kvreuse.incarnation;

import io.kvreuse.error.KvReuseException;
import io.kvreuse.error.ProblemType;
import java.util.UUID;

/**
 * A report carried a fencing epoch other than the incarnation's current one (409 {@code
 * stale-epoch}): whatever the reporter holds under the old epoch is void.
 */
public class StaleEpochException extends KvReuseException {

    public StaleEpochException(UUID id, long presented, long current, IncarnationState state) {
        super(
                ProblemType.STALE_EPOCH,
                "incarnation " + id + " is at epoch " + current + ", the report carried " + presented);
        with("incarnationId", id);
        with("presentedEpoch", presented);
        with("currentEpoch", current);
        with("currentState", state);
    }
}
