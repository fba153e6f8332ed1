package io.kvreuse.index;

import java.util.List;
import java.util.UUID;

/**
 * A bank as stored (e.g. in PostgreSQL), for rebuilding the index at startup.
 *
 * @param blocks the bank's blocks, at most one per slot and per hash
 */
public record BankSnapshot(
        UUID bankId, String domainId, long bankEpoch, int capacityBlocks, boolean published, List<StoredBlock> blocks) {

    public BankSnapshot {
        blocks = List.copyOf(blocks);
    }
}
