package io.kvreuse.domain;

import java.time.Instant;
import org.jspecify.annotations.Nullable;

/**
 * A certified (or revoked) layout domain: its digest id, the typed contract and its history. The
 * accessors other features need most are lifted from the contract.
 */
public record LayoutDomain(
        String domainId,
        DomainStatus status,
        LayoutContract contract,
        Instant certifiedAt,
        String certifiedBy,
        @Nullable Instant revokedAt,
        @Nullable String revokedBy,
        @Nullable String revokeReason) {

    public boolean isCertified() {
        return status == DomainStatus.CERTIFIED;
    }

    public TransportClass transportClass() {
        return contract.transportClass();
    }

    public int tpSize() {
        return contract.tpSize();
    }

    public int blockSizeTokens() {
        return contract.blockSizeTokens();
    }

    public long bytesPerBlockPerRank() {
        return contract.bytesPerBlockPerRank();
    }

    public int numKvHeads() {
        return contract.numKvHeads();
    }

    public String modelId() {
        return contract.modelId();
    }
}
