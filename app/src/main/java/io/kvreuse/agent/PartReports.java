package io.kvreuse.agent;

import io.kvreuse.protocol.PartState;
import java.util.UUID;
import org.jspecify.annotations.Nullable;

/** Where a part's progress goes: the control plane, through the outbox that retries until it is heard. */
interface PartReports {

    void report(
            UUID orderId,
            int rank,
            PartState state,
            long bytes,
            long durationUs,
            @Nullable Integer nativeStatus,
            @Nullable String detail);
}
