package io.kvreuse.domain;

import com.fasterxml.jackson.annotation.JsonUnwrapped;
import io.swagger.v3.oas.annotations.media.Schema;
import java.time.Instant;
import org.jspecify.annotations.Nullable;

/** A domain on the wire: its id and status, the contract's fields inline, and its history. */
@Schema(name = "Domain", description = "A layout domain: a certified (or revoked) layout contract")
record DomainResponse(
        @Schema(description = "The layout domain") String domainId,
        @Schema(description = "CERTIFIED or REVOKED") DomainStatus status,
        @JsonUnwrapped LayoutContract contract,
        @Schema(description = "When it was certified") Instant certifiedAt,
        @Schema(description = "Who certified it") String certifiedBy,

        @Schema(description = "When it was revoked") @Nullable
        Instant revokedAt,

        @Schema(description = "Who revoked it") @Nullable String revokedBy,

        @Schema(description = "Why it was revoked") @Nullable
        String revokeReason) {

    static DomainResponse of(LayoutDomain d) {
        return new DomainResponse(
                d.domainId(),
                d.status(),
                d.contract(),
                d.certifiedAt(),
                d.certifiedBy(),
                d.revokedAt(),
                d.revokedBy(),
                d.revokeReason());
    }
}
