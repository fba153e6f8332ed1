package io.kvreuse.incarnation;

import java.util.UUID;
import org.jspecify.annotations.Nullable;

/**
 * The answer to a registration: the new incarnation's state and fencing epoch ({@code REGISTERED}
 * at 1, or {@code READY} at 2 when the registration was also the first heartbeat), and the id of
 * the retained bank created with it, if one was.
 */
public record RegistrationReport(
        UUID incarnationId,
        IncarnationState state,
        long fencingEpoch,
        @Nullable UUID bankId) {}
