package io.kvreuse.incarnation;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.jspecify.annotations.Nullable;

/** What a registration stores. */
record NewIncarnation(
        UUID id,
        @Nullable String stableName,
        EngineRole role,
        String domainId,
        String hostId,
        @Nullable String fabricDomain,
        String controlEndpoint,
        List<String> capabilities,
        String ownerSubject,
        List<IncarnationView.Rank> ranks) {

    Map<String, Object> auditDetail() {
        Map<String, Object> d = new LinkedHashMap<>();
        d.put("role", role.name());
        d.put("domainId", domainId);
        d.put("hostId", hostId);
        if (stableName != null) {
            d.put("stableName", stableName);
        }
        d.put(
                "gpuOrdinals",
                new ArrayList<>(
                        ranks.stream().map(IncarnationView.Rank::gpuOrdinal).toList()));
        return d;
    }
}
