package io.kvreuse.index;

import java.util.UUID;

/** A write named a bank the index does not know (never registered, or dropped). */
public final class UnknownBankException extends IllegalArgumentException {

    private final UUID bankId;

    public UnknownBankException(UUID bankId) {
        super("bank " + bankId + " is not in the prefix index");
        this.bankId = bankId;
    }

    public UUID bankId() {
        return bankId;
    }
}
