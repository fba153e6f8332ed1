package io.kvreuse.lease;

import io.kvreuse.domain.TransportClass;
import java.time.Instant;
import java.util.UUID;

/** PROPOSED leases as selection would hand them to the lease package, for tests that write them directly. */
final class TestProposals {

    private TestProposals() {}

    /**
     * A three-block proposal of {@code donor}'s bank to {@code target}, at epoch 1 of each, live for a
     * minute from {@code now}.
     */
    static LeaseProposals.Proposal proposal(String domain, String donor, String bank, String target, Instant now) {
        return proposal(domain, donor, bank, target, now, new long[] {11, -22, 33});
    }

    /** The same with {@code hashes} as its fetched blocks, at slots {@code 0..hashes.length - 1}. */
    static LeaseProposals.Proposal proposal(
            String domain, String donor, String bank, String target, Instant now, long[] hashes) {
        return new LeaseProposals.Proposal(
                UUID.randomUUID(),
                "req-" + UUID.randomUUID(),
                domain,
                TransportClass.GPU_CUDA_IPC,
                UUID.fromString(donor),
                1,
                UUID.fromString(bank),
                1,
                UUID.fromString(target),
                1,
                0,
                hashes,
                new int[] {0, hashes.length},
                null,
                "kv.fetch_gpu",
                1.0,
                5.0,
                1 << 20,
                900,
                now.plusSeconds(60),
                now.plusSeconds(120),
                now.plusSeconds(300));
    }
}
