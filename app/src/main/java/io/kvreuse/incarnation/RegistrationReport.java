package io.kvreuse.incarnation;

import io.swagger.v3.oas.annotations.media.Schema;
import java.util.UUID;
import org.jspecify.annotations.Nullable;

/**
 * The answer to a registration: the new incarnation's state and fencing epoch ({@code REGISTERED}
 * at 1, or {@code READY} at 2 when the registration was also the first heartbeat), and the id of
 * the retained bank created with it, if one was.
 */
@Schema(description = "A registered incarnation: its state, fencing epoch and the bank created with it")
public record RegistrationReport(
        @Schema(description = "The engine incarnation") UUID incarnationId,

        @Schema(description = "REGISTERED, or READY when the registration was also the first heartbeat")
        IncarnationState state,

        @Schema(description = "The current fencing epoch (1, or 2 when READY)")
        long fencingEpoch,

        @Schema(description = "The retained bank created with the registration; absent when none was") @Nullable
        UUID bankId) {}
