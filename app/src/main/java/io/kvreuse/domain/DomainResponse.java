package io.kvreuse.domain;

import com.fasterxml.jackson.annotation.JsonUnwrapped;
import java.time.Instant;
import org.jspecify.annotations.Nullable;

/** A domain on the wire: its id and status, the contract's fields inline, and its history. */
record DomainResponse(
        String domainId,
        DomainStatus status,
        @JsonUnwrapped LayoutContract contract,
        Instant certifiedAt,
        String certifiedBy,
        @Nullable Instant revokedAt,
        @Nullable String revokedBy,
        @Nullable String revokeReason) {

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
