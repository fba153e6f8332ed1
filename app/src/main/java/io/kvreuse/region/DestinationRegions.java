package io.kvreuse.region;

import io.kvreuse.audit.AuditEntry;
import io.kvreuse.audit.AuditTrail;
import io.kvreuse.error.KvReuseException;
import io.kvreuse.error.ProblemType;
import io.kvreuse.incarnation.IncarnationState;
import io.kvreuse.incarnation.IncarnationView;
import io.kvreuse.incarnation.Incarnations;
import io.kvreuse.incarnation.StaleEpochException;
import io.kvreuse.security.ApiPrincipal;
import java.time.Clock;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;
import org.springframework.stereotype.Service;
import org.springframework.transaction.reactive.TransactionalOperator;
import reactor.core.publisher.Mono;

/**
 * Destination regions: a target incarnation registers, per rank, the memory transfers may write
 * into, before any destination names it; a destination may name only these, inside their capacity.
 * On one host a region reference belongs to one live incarnation: another's bank part or
 * destination region is refused ({@code region-held}).
 */
@Service
public class DestinationRegions {

    private static final Set<IncarnationState> OPEN = Set.of(IncarnationState.REGISTERED, IncarnationState.READY);

    private final DestinationRegionStore store;
    private final Incarnations incarnations;
    private final AuditTrail audit;
    private final TransactionalOperator tx;
    private final Clock clock;

    DestinationRegions(
            DestinationRegionStore store,
            Incarnations incarnations,
            AuditTrail audit,
            TransactionalOperator tx,
            Clock clock) {
        this.store = store;
        this.incarnations = incarnations;
        this.audit = audit;
        this.tx = tx;
        this.clock = clock;
    }

    Mono<DestinationRegionRequests.DestinationRegionList> register(
            UUID id, DestinationRegionRequests.DestinationRegionRegistration req, ApiPrincipal p) {
        return incarnations.requireOwned(id, p).flatMap(inc -> {
            check(inc, req);
            List<String> refs = req.regions().stream()
                    .map(DestinationRegionRequests.DestinationRegion::regionRef)
                    .distinct()
                    .toList();
            return store.of(id)
                    .collectList()
                    .flatMap(existing -> {
                        checkSame(existing, req.regions());
                        return store.heldElsewhere(id, inc.hostId(), refs)
                                .flatMap(ref -> Mono.<Long>error(held(inc.hostId(), ref)))
                                .switchIfEmpty(Mono.defer(() -> store.insert(id, req.regions(), clock.instant())))
                                .flatMap(added -> added == 0
                                        ? Mono.empty()
                                        : audit.record(AuditEntry.action(
                                                        p.actor(),
                                                        "incarnation",
                                                        id.toString(),
                                                        "DESTINATION_REGIONS_REGISTERED")
                                                .withDetail(Map.of("regions", added))));
                    })
                    .as(tx::transactional)
                    .then(list(id));
        });
    }

    Mono<DestinationRegionRequests.DestinationRegionList> list(UUID id, ApiPrincipal p) {
        return incarnations.requireOwned(id, p).then(list(id));
    }

    private Mono<DestinationRegionRequests.DestinationRegionList> list(UUID id) {
        return store.of(id).collectList().map(r -> new DestinationRegionRequests.DestinationRegionList(id, r));
    }

    /** What an incarnation registered, for checking destinations that name its regions. */
    public Mono<Registry> registry(UUID incarnationId) {
        return store.of(incarnationId).collectList().map(Registry::of);
    }

    private static void check(IncarnationView inc, DestinationRegionRequests.DestinationRegionRegistration req) {
        if (req.fencingEpoch() != inc.fencingEpoch()) {
            throw new StaleEpochException(inc.incarnationId(), req.fencingEpoch(), inc.fencingEpoch(), inc.state());
        }
        if (!OPEN.contains(inc.state())) {
            throw new KvReuseException(
                            ProblemType.INCARNATION_NOT_OPEN,
                            "incarnation " + inc.incarnationId() + " is " + inc.state()
                                    + "; destination regions are registered while REGISTERED or READY")
                    .with("currentState", inc.state());
        }
        Map<String, Integer> capacities = new HashMap<>();
        for (DestinationRegionRequests.DestinationRegion r : req.regions()) {
            if (r.rank() >= inc.tpSize()) {
                throw invalid("rank " + r.rank() + " is not one of the incarnation's ranks 0.." + (inc.tpSize() - 1));
            }
            Integer before = capacities.put(r.rank() + " " + r.regionRef(), r.capacityBlocks());
            if (before != null && !before.equals(r.capacityBlocks())) {
                throw invalid("rank " + r.rank() + " region " + r.regionRef() + " is given two capacities");
            }
        }
    }

    private static void checkSame(
            List<DestinationRegionRequests.RegisteredDestinationRegion> existing,
            List<DestinationRegionRequests.DestinationRegion> wanted) {
        for (DestinationRegionRequests.DestinationRegion w : wanted) {
            for (DestinationRegionRequests.RegisteredDestinationRegion e : existing) {
                if (e.rank() == w.rank()
                        && e.regionRef().equals(w.regionRef())
                        && e.capacityBlocks() != w.capacityBlocks()) {
                    throw new KvReuseException(
                                    ProblemType.DESTINATION_REGION_DIFFERS,
                                    "rank " + w.rank() + " region " + w.regionRef() + " is registered with "
                                            + e.capacityBlocks() + " blocks, not " + w.capacityBlocks())
                            .with("rank", w.rank())
                            .with("regionRef", w.regionRef());
                }
            }
        }
    }

    private static KvReuseException held(String hostId, String ref) {
        return new KvReuseException(
                        ProblemType.REGION_HELD,
                        "region " + ref + " on host " + hostId + " is registered by another live incarnation")
                .with("regionRef", ref);
    }

    private static KvReuseException invalid(String detail) {
        return new KvReuseException(ProblemType.INVALID_DESTINATION_REGION, detail);
    }

    /** One incarnation's registered destination regions, by rank and reference. */
    public record Registry(Map<Integer, Map<String, Integer>> capacities) {

        static Registry of(List<DestinationRegionRequests.RegisteredDestinationRegion> regions) {
            return new Registry(regions.stream()
                    .collect(Collectors.groupingBy(
                            DestinationRegionRequests.RegisteredDestinationRegion::rank,
                            Collectors.toMap(
                                    DestinationRegionRequests.RegisteredDestinationRegion::regionRef,
                                    DestinationRegionRequests.RegisteredDestinationRegion::capacityBlocks))));
        }

        /**
         * Why a destination of {@code rank} in {@code regionRef} at slot runs {@code {start, count}}
         * is refused, or null when the region is registered for that rank and holds the runs.
         */
        public @Nullable String problem(int rank, String regionRef, int[][] runs) {
            Integer capacity = capacities.getOrDefault(rank, Map.of()).get(regionRef);
            if (capacity == null) {
                return "rank " + rank + ": region " + regionRef + " is not a destination region the target registered"
                        + " for this rank (POST /api/v1/incarnations/{id}/destination-regions first)";
            }
            for (int[] run : runs) {
                if ((long) run[0] + run[1] > capacity) {
                    return "rank " + rank + ": slots " + run[0] + ".." + (run[0] + run[1] - 1) + " lie outside region "
                            + regionRef + " (" + capacity + " blocks)";
                }
            }
            return null;
        }
    }

    /** The refusal of a destination whose region the registry does not hold (422). */
    public static KvReuseException notRegistered(UUID leaseId, String detail) {
        return new KvReuseException(ProblemType.DESTINATION_REGION_NOT_REGISTERED, detail).with("leaseId", leaseId);
    }
}
