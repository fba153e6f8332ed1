package io.kvreuse.agent.kvevents;

import io.kvreuse.protocol.InventoryBatch;
import io.kvreuse.protocol.KvEventSource;
import io.kvreuse.protocol.StreamBreak;
import java.util.List;
import java.util.UUID;
import org.jspecify.annotations.Nullable;

/** The control plane as the bridge sees it; every call blocks (the bridge runs on its own threads). */
public interface InventoryFeed {

    /** The event sources of this host's banks, with where each rank's ingestion stands. */
    List<KvEventSource> sources() throws FeedException;

    /**
     * Applies one ordered batch ({@code POST /banks/{bankId}/events}, an {@link InventoryBatch} on the
     * wire) whose events arrive as their JSON, one array each ({@link EventJson}); answers the
     * applied-through event id.
     */
    long post(UUID bankId, int rank, long firstEventId, List<byte[]> events, @Nullable Long sourceSequence)
            throws FeedException;

    void streamBroke(UUID bankId, int rank, StreamBreak report) throws FeedException;

    /** A bank-wide reset of epoch {@code ifEpoch} (a no-op when another rank's stream already reset it). */
    void reset(UUID bankId, long ifEpoch) throws FeedException;

    /** A refused or failed call: {@code status} 0 for no answer at all (network, timeout). */
    final class FeedException extends Exception {
        private final int status;
        private final String type;

        public FeedException(int status, String type, String message) {
            super(message);
            this.status = status;
            this.type = type;
        }

        /** The HTTP status; 0 when the control plane did not answer. */
        public int status() {
            return status;
        }

        /** The problem slug, e.g. {@code snapshot-required}; empty when none. */
        public String type() {
            return type;
        }

        /** Worth retrying unchanged: no answer, 5xx, or 429. */
        public boolean transientFailure() {
            return status == 0 || status >= 500 || status == 429;
        }
    }
}
