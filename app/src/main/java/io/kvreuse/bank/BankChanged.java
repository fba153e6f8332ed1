package io.kvreuse.bank;

import java.util.UUID;

/** Published in-process after a transaction appended to a bank's change feed. */
public record BankChanged(UUID bankId) {}
