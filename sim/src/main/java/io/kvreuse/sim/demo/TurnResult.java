package io.kvreuse.sim.demo;

import org.jspecify.annotations.Nullable;

/**
 * One request of the traffic as served: prompt tokens computed by the prefill engine and reused
 * from a donor, the router's decision, and what happened to the lease (if any).
 *
 * @param bytesMoved KV bytes delivered into the prefill engine's regions and verified there
 * @param delivered the lease reached DELIVERED (every rank done for the same blocks)
 * @param outcome the lease's outcome ({@code COMMITTED}, {@code PARTIAL}, {@code FAILED}, …)
 */
record TurnResult(
        String run,
        String request,
        int promptTokens,
        int computedTokens,
        int reusedTokens,
        String decision,
        @Nullable String reason,
        @Nullable String donor,
        int fetchBlocks,
        long bytesMoved,
        boolean delivered,
        @Nullable String leaseState,
        @Nullable String outcome) {

    boolean hinted() {
        return decision.equals("HINT");
    }

    boolean partial() {
        return "PARTIAL".equals(outcome);
    }

    /** A hint whose lease did not end with the blocks committed (partial transfers counted apart). */
    boolean failed() {
        return hinted() && !"COMMITTED".equals(outcome) && !partial();
    }
}
