package io.kvreuse.lease;

import io.swagger.v3.oas.annotations.media.Schema;
import java.util.UUID;

/** A batch item's answer about one lease: its state once the report was applied. */
@Schema(description = "A batch item's answer about one lease")
public record LeaseReportResult(
        @Schema(description = "The lease") UUID leaseId,

        @Schema(description = "The lease's state once the report was applied")
        LeaseState state) {}
