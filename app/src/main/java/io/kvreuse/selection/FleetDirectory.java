package io.kvreuse.selection;

import io.kvreuse.domain.CostModel;
import io.kvreuse.domain.TransportClass;
import io.kvreuse.incarnation.EngineRole;
import io.kvreuse.incarnation.IncarnationState;
import io.kvreuse.store.PgNotifications;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.context.event.EventListener;
import org.springframework.core.annotation.Order;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The live fleet as donor selection needs it, in memory: incarnations, layout domains and their
 * cost models. Rows change in PostgreSQL; triggers NOTIFY every replica, which reloads just that
 * row; a periodic full refresh covers anything missed.
 */
@Component
public class FleetDirectory {

    private static final Log log = LogFactory.getLog(FleetDirectory.class);
    private static final String INCARNATIONS = """
            SELECT i.incarnation_id, i.role, i.state, i.domain_id, i.host_id, i.fabric_domain, i.control_endpoint,
                   i.capabilities, i.fencing_epoch,
                   array_agg(r.gpu_ordinal ORDER BY r.rank) AS ordinals
            FROM engine_incarnation i JOIN incarnation_rank r ON r.incarnation_id = i.incarnation_id
            WHERE i.state NOT IN ('EXITED', 'RECLAIMED')""";
    private static final String DOMAINS = """
            SELECT d.domain_id, d.status, d.transport_class, d.tp_size, d.block_size_tokens, d.bytes_per_block_per_rank,
                   c.prefill_ms_per_token, c.prefill_ms_per_token_sq, c.transfer_setup_ms, c.transfer_gbytes_per_s
            FROM layout_domain d LEFT JOIN domain_cost_model c ON c.domain_id = d.domain_id""";

    private final DatabaseClient db;
    private final PgNotifications notifications;
    private final Map<UUID, Stamped<Incarnation>> incarnations = new ConcurrentHashMap<>();
    private final Map<String, Stamped<Domain>> domains = new ConcurrentHashMap<>();
    // orders reloads and refreshes: a refresh never overwrites or removes what a later reload read
    private final AtomicLong stamps = new AtomicLong();
    private final Set<String> queued = ConcurrentHashMap.newKeySet();
    // full reads of the domains that have ended: how a feed reload is told apart from a refresh
    private final AtomicLong domainRefreshes = new AtomicLong();
    private @Nullable Disposable feed;

    FleetDirectory(DatabaseClient db, PgNotifications notifications) {
        this.db = db;
        this.notifications = notifications;
    }

    /** A live engine incarnation: what selection checks and what the hint carries. */
    public record Incarnation(
            UUID id,
            EngineRole role,
            IncarnationState state,
            String domainId,
            String hostId,
            @Nullable String fabricDomain,
            String controlEndpoint,
            Set<String> capabilities,
            long fencingEpoch,
            int[] gpuOrdinals) {

        public boolean isReady() {
            return state == IncarnationState.READY;
        }
    }

    /** A layout domain with its profitability model. */
    public record Domain(
            String id,
            boolean certified,
            TransportClass transportClass,
            int tpSize,
            int blockSizeTokens,
            long bytesPerBlockPerRank,
            CostModel costModel) {}

    public @Nullable Incarnation incarnation(UUID id) {
        Stamped<Incarnation> s = incarnations.get(id);
        return s == null ? null : s.value();
    }

    public @Nullable Domain domain(String id) {
        Stamped<Domain> s = domains.get(id);
        return s == null ? null : s.value();
    }

    @EventListener(ApplicationReadyEvent.class)
    @Order(0)
    void load() {
        // start-up, before readiness: selection must see the fleet from its first request
        refresh().block(Duration.ofSeconds(60));
        feed = notifications
                .channel(PgNotifications.FLEET)
                // a reload of the same row still queued covers this notification too (a cost model
                // changes with every committed lease); one that already started does not
                .filter(n -> queued.add(n.payload()))
                .concatMap(n -> Mono.defer(() -> {
                            queued.remove(n.payload());
                            return reload(n.payload());
                        })
                        .onErrorResume(e -> Mono.empty()))
                .subscribe();
        log.info("fleet directory: " + incarnations.size() + " live incarnations, " + domains.size() + " domains");
    }

    @Scheduled(
            fixedDelayString = "${kvreuse.selection.directory-refresh:5s}",
            initialDelayString = "${kvreuse.selection.directory-refresh:5s}")
    void periodicRefresh() {
        refresh().subscribe(null, e -> log.debug("fleet directory refresh failed: " + e.getMessage()));
    }

    Mono<Void> refresh() {
        return Mono.defer(() -> {
            long start = stamps.incrementAndGet();
            Mono<Void> domainLoad = loadDomains(db.sql(DOMAINS))
                    .collectMap(Domain::id)
                    .doOnNext(fresh -> {
                        merge(domains, fresh, start, (old, neu) -> true);
                        domainRefreshes.incrementAndGet();
                    })
                    .then();
            Mono<Void> incarnationLoad = loadIncarnations(db.sql(INCARNATIONS + " GROUP BY i.incarnation_id"))
                    .collectMap(Incarnation::id)
                    .doOnNext(fresh -> merge(incarnations, fresh, start, FleetDirectory::newer))
                    .then();
            return domainLoad.then(incarnationLoad);
        });
    }

    /**
     * How many full reads of the domains have ended (periodic and start-up refreshes, not the
     * feed's reloads of one row). A value that appears while this stays the same came through the
     * change feed.
     */
    long domainRefreshes() {
        return domainRefreshes.get();
    }

    /** A value and the stamp of the read that produced it. */
    private record Stamped<T>(T value, long stamp) {}

    /** Every state change bumps the fencing epoch, so a lower epoch is an older read. */
    private static boolean newer(Incarnation old, Incarnation neu) {
        return neu.fencingEpoch() >= old.fencingEpoch();
    }

    /** Applies a full read taken at {@code start}, keeping anything a reload read after it. */
    private static <K, T> void merge(
            Map<K, Stamped<T>> map, Map<K, T> fresh, long start, java.util.function.BiPredicate<T, T> newer) {
        fresh.forEach((k, v) -> map.compute(
                k,
                (key, old) -> old == null || (old.stamp() < start && newer.test(old.value(), v))
                        ? new Stamped<>(v, start)
                        : old));
        map.entrySet()
                .removeIf(e -> !fresh.containsKey(e.getKey()) && e.getValue().stamp() < start);
    }

    private Mono<Void> reload(String payload) {
        if (payload.isEmpty()) {
            return refresh();
        }
        int colon = payload.indexOf(':');
        String kind = payload.substring(0, colon);
        String id = payload.substring(colon + 1);
        if (kind.equals("incarnation")) {
            UUID incarnationId = UUID.fromString(id);
            return loadIncarnations(db.sql(INCARNATIONS + " AND i.incarnation_id = :id GROUP BY i.incarnation_id")
                            .bind("id", incarnationId))
                    .singleOrEmpty()
                    .doOnNext(i -> incarnations.compute(
                            i.id(),
                            (key, old) -> old == null || newer(old.value(), i)
                                    ? new Stamped<>(i, stamps.incrementAndGet())
                                    : old))
                    .switchIfEmpty(Mono.fromRunnable(() -> incarnations.remove(incarnationId)))
                    .then();
        }
        return loadDomains(db.sql(DOMAINS + " WHERE d.domain_id = :id").bind("id", id))
                .doOnNext(d -> domains.put(d.id(), new Stamped<>(d, stamps.incrementAndGet())))
                .then();
    }

    private static Flux<Incarnation> loadIncarnations(DatabaseClient.GenericExecuteSpec spec) {
        return spec.map((row, meta) -> {
                    Integer[] ordinals = row.get("ordinals", Integer[].class);
                    String[] caps = row.get("capabilities", String[].class);
                    int[] gpus = new int[ordinals.length];
                    for (int i = 0; i < gpus.length; i++) {
                        gpus[i] = ordinals[i];
                    }
                    return new Incarnation(
                            row.get("incarnation_id", UUID.class),
                            EngineRole.valueOf(row.get("role", String.class)),
                            IncarnationState.valueOf(row.get("state", String.class)),
                            row.get("domain_id", String.class),
                            row.get("host_id", String.class),
                            row.get("fabric_domain", String.class),
                            row.get("control_endpoint", String.class),
                            Set.of(caps == null ? new String[0] : caps),
                            row.get("fencing_epoch", Long.class),
                            gpus);
                })
                .all();
    }

    private static Flux<Domain> loadDomains(DatabaseClient.GenericExecuteSpec spec) {
        return spec.map((row, meta) -> {
                    TransportClass transport = TransportClass.valueOf(row.get("transport_class", String.class));
                    Double perToken = row.get("prefill_ms_per_token", Double.class);
                    CostModel model = perToken == null
                            ? CostModel.defaults(transport)
                            : new CostModel(
                                    perToken,
                                    row.get("prefill_ms_per_token_sq", Double.class),
                                    row.get("transfer_setup_ms", Double.class),
                                    row.get("transfer_gbytes_per_s", Double.class));
                    return new Domain(
                            row.get("domain_id", String.class),
                            "CERTIFIED".equals(row.get("status", String.class)),
                            transport,
                            row.get("tp_size", Integer.class),
                            row.get("block_size_tokens", Integer.class),
                            row.get("bytes_per_block_per_rank", Long.class),
                            model);
                })
                .all();
    }

    @jakarta.annotation.PreDestroy
    void stop() {
        if (feed != null) {
            feed.dispose();
        }
    }
}
