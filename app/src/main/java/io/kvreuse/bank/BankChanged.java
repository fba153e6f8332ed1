package io.kvreuse.bank;

import java.util.UUID;
import org.jspecify.annotations.Nullable;

/**
 * Published in-process after a transaction appended to a bank's change feed; {@code appended} is the
 * feed row when the writer has it at hand (the one-call ingestion answers it), so this replica
 * applies it without reading it back.
 */
public record BankChanged(UUID bankId, @Nullable Appended appended) {

    public BankChanged(UUID bankId) {
        this(bankId, null);
    }

    /**
     * A feed row as the write answered it: its STOREs and REMOVEs in binary, base64 as the feed reads
     * fetch them, decoded by the feed's worker rather than on the request that wrote it.
     */
    public record Appended(long seq, String blocks) {

        BankStore.FeedEntry decode() {
            return BankStore.binaryEntry(seq, blocks);
        }
    }
}
