package io.kvreuse.domain;

import io.swagger.v3.oas.annotations.media.Schema;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.Size;

/** Why an operator revokes a domain; required, it goes to the audit trail. */
@Schema(name = "DomainRevokeRequest", description = "Revokes a domain")
record RevokeRequest(
        @Schema(description = "Why, in words (recorded in the audit trail)") @NotBlank @Size(max = 1000)
        String reason) {}
