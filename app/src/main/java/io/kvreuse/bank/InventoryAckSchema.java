package io.kvreuse.bank;

import io.swagger.v3.oas.annotations.media.Schema;

/** The answer of {@code POST /api/v1/banks/{bankId}/events}, as the served OpenAPI document describes it. */
@Schema(
        name = "InventoryEventsApplied",
        description = "The rank's inventory is applied, durably, through this event id "
                + "(ids already applied are acknowledged again without effect)")
record InventoryAckSchema(
        @Schema(
                description = "The last event id of the rank that is applied",
                requiredMode = Schema.RequiredMode.REQUIRED)
        long appliedThroughEventId) {}
