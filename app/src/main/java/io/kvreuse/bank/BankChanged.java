package io.kvreuse.bank;

import java.util.UUID;
import org.jspecify.annotations.Nullable;

/**
 * Published in-process after a transaction appended to a bank's change feed; {@code appended} is the
 * feed row when the writer has it at hand (the one-call ingestion answers it), so this replica
 * applies it without reading it back.
 */
public record BankChanged(UUID bankId, BankStore.@Nullable FeedEntry appended) {

    public BankChanged(UUID bankId) {
        this(bankId, null);
    }
}
