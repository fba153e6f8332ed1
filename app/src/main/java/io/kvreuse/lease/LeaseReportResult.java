package io.kvreuse.lease;

import java.util.UUID;

/** A batch item's answer about one lease: its state once the report was applied. */
public record LeaseReportResult(UUID leaseId, LeaseState state) {}
