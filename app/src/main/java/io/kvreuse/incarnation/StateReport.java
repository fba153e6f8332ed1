package io.kvreuse.incarnation;

import io.swagger.v3.oas.annotations.media.Schema;
import java.util.UUID;

/** The answer to an engine's heartbeat, drain or exit: where its incarnation stands now. */
@Schema(description = "An incarnation's state and fencing epoch after a report")
public record StateReport(
        @Schema(description = "The engine incarnation") UUID incarnationId,
        @Schema(description = "The state after the report") IncarnationState state,
        @Schema(description = "The current fencing epoch") long fencingEpoch) {}
