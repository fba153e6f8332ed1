package io.kvreuse.domain;

import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.Size;

/** Why an operator revokes a domain; required, it goes to the audit trail. */
record RevokeRequest(@NotBlank @Size(max = 1000) String reason) {}
