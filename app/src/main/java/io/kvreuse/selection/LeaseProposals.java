package io.kvreuse.selection;

import io.kvreuse.settings.ReuseSettings;
import io.kvreuse.settings.ReuseSettingsService;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.r2dbc.pool.ConnectionPool;
import io.r2dbc.pool.ConnectionPoolConfiguration;
import io.r2dbc.postgresql.PostgresqlConnectionFactoryProvider;
import io.r2dbc.spi.ConnectionFactory;
import io.r2dbc.spi.ValidationDepth;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.boot.r2dbc.ConnectionFactoryBuilder;
import org.springframework.boot.r2dbc.autoconfigure.R2dbcProperties;
import org.springframework.r2dbc.connection.R2dbcTransactionManager;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.stereotype.Component;
import org.springframework.transaction.reactive.TransactionalOperator;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;

/**
 * Records a selection's PROPOSED lease. It holds nothing yet, so losing it in a crash is safe
 * (the donor refuses an unknown lease, the target recomputes): it is written with
 * {@code synchronous_commit = off}. Every later transition that holds memory is durable. The
 * in-flight caps are enforced in the same transaction ({@link InflightCaps}): a proposal that would
 * pass its donor's or target's cap is not written.
 */
@Component
class LeaseProposals implements DisposableBean {

    private final ConnectionFactory connections;
    private final DatabaseClient db;
    private final TransactionalOperator tx;
    private final ReuseSettingsService settings;
    private final Clock clock;
    private final Counter proposed;

    /** Its own small pool whose sessions run with {@code synchronous_commit = off}. */
    LeaseProposals(R2dbcProperties r2dbc, ReuseSettingsService settings, Clock clock, MeterRegistry meters) {
        this.settings = settings;
        this.clock = clock;
        // a lease is born PROPOSED here, not moved there: this is the "to PROPOSED" series of the
        // lease transitions (the other states are counted where the lease ledger moves them)
        this.proposed = Counter.builder("kvreuse.lease.transitions")
                .description(LEASE_TRANSITIONS_HELP)
                .tag("to", "PROPOSED")
                .register(meters);
        ConnectionFactory factory = ConnectionFactoryBuilder.withUrl(r2dbc.getUrl())
                .username(r2dbc.getUsername())
                .password(r2dbc.getPassword())
                .configure(options -> options.option(
                        PostgresqlConnectionFactoryProvider.OPTIONS, Map.of("synchronous_commit", "off")))
                .build();
        this.connections = factory instanceof ConnectionPool
                ? factory
                : new ConnectionPool(ConnectionPoolConfiguration.builder(factory)
                        .initialSize(2)
                        .maxSize(16)
                        .maxAcquireTime(Duration.ofSeconds(2))
                        .validationDepth(ValidationDepth.LOCAL)
                        .build());
        this.db = DatabaseClient.create(connections);
        this.tx = TransactionalOperator.create(new R2dbcTransactionManager(connections));
        if (connections instanceof ConnectionPool pool) {
            // open the connections now, so the first selection after a start does not pay for them
            pool.warmup().subscribe(null, e -> {});
        }
    }

    @Override
    public void destroy() {
        if (connections instanceof ConnectionPool pool) {
            pool.dispose();
        }
    }

    /** The help text of {@code kvreuse_lease_transitions_total}, shared with the lease ledger's series. */
    static final String LEASE_TRANSITIONS_HELP = "lease state changes by the state entered (PROPOSED: leases written)";

    /** Concurrent writes at most; proposals that arrive while they run are written together next. */
    static final int WRITERS = 4;

    /** Most proposals in one statement. */
    static final int MAX_GROUP = 256;

    private record Pending(DonorSelector.Plan plan, MonoSink<Boolean> done) {}

    private final Queue<Pending> queue = new ConcurrentLinkedQueue<>();
    private final AtomicInteger writing = new AtomicInteger();
    // System.nanoTime() of the last write that started while none ran, or that ended
    private final java.util.concurrent.atomic.AtomicLong lastProgress =
            new java.util.concurrent.atomic.AtomicLong(System.nanoTime());

    /**
     * Whether PostgreSQL has stopped answering proposals: a write has been in flight for {@code
     * after} without any write ending. A selection then answers STORE_UNAVAILABLE at once instead of
     * queueing a write that could only end after its router's deadline.
     */
    boolean stalled(java.time.Duration after) {
        return (writing.get() > 0 || !queue.isEmpty()) && System.nanoTime() - lastProgress.get() > after.toNanos();
    }

    /**
     * Records a PROPOSED lease: true when written, false when its donor or target is at its
     * in-flight cap. Under load the proposals of concurrent selections are grouped (group commit):
     * while {@link #WRITERS} writes are in flight, new proposals queue and the next free writer
     * admits and inserts all of them in one transaction. Alone, a proposal is written at once. If a
     * grouped write fails, each of its proposals is written alone, so one bad row fails only its own
     * selection.
     */
    Mono<Boolean> record(DonorSelector.Plan p) {
        return Mono.create(sink -> {
            queue.add(new Pending(p, sink));
            drain();
        });
    }

    private void drain() {
        while (!queue.isEmpty()) {
            int n = writing.get();
            if (n >= WRITERS) {
                return;
            }
            if (!writing.compareAndSet(n, n + 1)) {
                continue;
            }
            if (n == 0) {
                lastProgress.set(System.nanoTime());
            }
            List<Pending> group = new ArrayList<>();
            for (Pending next = queue.poll(); next != null; next = group.size() < MAX_GROUP ? queue.poll() : null) {
                group.add(next);
            }
            if (group.isEmpty()) {
                writing.decrementAndGet();
                continue;
            }
            write(group)
                    .doFinally(signal -> {
                        lastProgress.set(System.nanoTime());
                        writing.decrementAndGet();
                        drain();
                    })
                    .subscribe();
        }
    }

    /** Writes the group and answers each of its proposals; never fails itself. */
    private Mono<Void> write(List<Pending> group) {
        return admitAndInsert(group.stream().map(Pending::plan).toList())
                .doOnNext(admitted -> {
                    int written = 0;
                    for (boolean a : admitted) {
                        written += a ? 1 : 0;
                    }
                    proposed.increment(written);
                    for (int i = 0; i < admitted.length; i++) {
                        group.get(i).done().success(admitted[i]);
                    }
                })
                .then()
                .onErrorResume(e -> {
                    if (group.size() == 1) {
                        group.getFirst().done().error(e);
                        return Mono.empty();
                    }
                    return Flux.fromIterable(group)
                            .flatMap(g -> write(List.of(g)))
                            .then();
                });
    }

    /** One transaction: lock and count the parties, then insert the proposals that fit under the caps. */
    private Mono<boolean[]> admitAndInsert(List<DonorSelector.Plan> plans) {
        ReuseSettings caps = settings.current();
        List<InflightCaps.Parties> parties = plans.stream()
                .map(p -> new InflightCaps.Parties(p.donor().id(), p.target().id()))
                .toList();
        return InflightCaps.lockAndCount(
                        db, parties, clock.instant(), caps.maxInflightPerDonor(), caps.maxInflightPerTarget())
                .flatMap(counts -> {
                    boolean[] admitted = InflightCaps.admit(
                            parties, counts, caps.maxInflightPerDonor(), caps.maxInflightPerTarget());
                    List<DonorSelector.Plan> fit = new ArrayList<>(plans.size());
                    for (int i = 0; i < admitted.length; i++) {
                        if (admitted[i]) {
                            fit.add(plans.get(i));
                        }
                    }
                    return (fit.isEmpty() ? Mono.<Void>empty() : insert(fit)).thenReturn(admitted);
                })
                .as(tx::transactional);
    }

    private Mono<Void> insert(List<DonorSelector.Plan> plans) {
        int n = plans.size();
        String[] ids = new String[n];
        String[] requests = new String[n];
        String[] domains = new String[n];
        String[] donors = new String[n];
        Long[] donorEpochs = new Long[n];
        String[] banks = new String[n];
        Long[] bankEpochs = new Long[n];
        String[] targets = new String[n];
        Long[] targetEpochs = new Long[n];
        Integer[] locals = new Integer[n];
        Integer[] fetches = new Integer[n];
        String[] hashes = new String[n];
        String[] transports = new String[n];
        Double[] transferMs = new Double[n];
        Double[] recomputeMs = new Double[n];
        Long[] budgets = new Long[n];
        Integer[] manifests = new Integer[n];
        String[] ttls = new String[n];
        String[] transferDeadlines = new String[n];
        String[] abandons = new String[n];
        String[] runs = new String[n];
        String[] lineages = new String[n];
        String[] actions = new String[n];
        for (int i = 0; i < n; i++) {
            DonorSelector.Plan p = plans.get(i);
            ids[i] = p.leaseId().toString();
            requests[i] = p.requestId();
            domains[i] = p.domain().id();
            donors[i] = p.donor().id().toString();
            donorEpochs[i] = p.donor().fencingEpoch();
            banks[i] = p.bankId().toString();
            bankEpochs[i] = p.bankEpoch();
            targets[i] = p.target().id().toString();
            targetEpochs[i] = p.target().fencingEpoch();
            locals[i] = p.localPrefixBlocks();
            fetches[i] = p.fetchBlocks();
            hashes[i] = fetchedHashes(p);
            transports[i] = p.domain().transportClass();
            transferMs[i] = p.transferMs();
            recomputeMs[i] = p.recomputeMs();
            budgets[i] = p.budgetBytes();
            manifests[i] = p.manifestBytes();
            ttls[i] = p.leaseDeadline().toString();
            transferDeadlines[i] = p.transferDeadline().toString();
            abandons[i] = p.abandonDeadline().toString();
            runs[i] = runsJson(p.slotRuns());
            lineages[i] = p.mmLineage();
            actions[i] = p.cpu() ? "kv.fetch" : "kv.fetch_gpu";
        }
        return db.sql("""
                        INSERT INTO lease (lease_id, request_id, state, domain_id, donor_incarnation_id, donor_epoch, bank_id, bank_epoch,
                            target_incarnation_id, target_epoch, local_prefix_blocks, fetch_blocks, seq_hashes, transport_class,
                            predicted_transfer_ms, predicted_recompute_ms, budget_bytes, manifest_bytes, ttl_deadline,
                            transfer_deadline, abandon_deadline, source_slot_runs, mm_lineage, action_type)
                        SELECT p.id, p.request, 'PROPOSED', p.domain, p.donor, p.donor_epoch, p.bank, p.bank_epoch, p.target,
                            p.target_epoch, p.loc, p.fetched, CAST(p.hashes AS BIGINT[]), p.transport, p.transfer_ms,
                            p.recompute_ms, p.budget, p.manifest, p.ttl, p.transfer_deadline, p.abandon,
                            CAST(p.runs AS JSONB), p.lineage, p.action
                        FROM unnest(CAST(:id AS UUID[]), CAST(:request AS TEXT[]), CAST(:domain AS TEXT[]), CAST(:donor AS UUID[]),
                            CAST(:donorEpoch AS BIGINT[]), CAST(:bank AS UUID[]), CAST(:bankEpoch AS BIGINT[]),
                            CAST(:target AS UUID[]), CAST(:targetEpoch AS BIGINT[]), CAST(:local AS INTEGER[]),
                            CAST(:fetch AS INTEGER[]), CAST(:hashes AS TEXT[]), CAST(:transport AS TEXT[]),
                            CAST(:transferMs AS DOUBLE PRECISION[]), CAST(:recomputeMs AS DOUBLE PRECISION[]),
                            CAST(:budget AS BIGINT[]), CAST(:manifest AS INTEGER[]), CAST(:ttl AS TIMESTAMPTZ[]),
                            CAST(:transferDeadline AS TIMESTAMPTZ[]), CAST(:abandon AS TIMESTAMPTZ[]), CAST(:runs AS TEXT[]),
                            CAST(:lineage AS TEXT[]), CAST(:action AS TEXT[]))
                            AS p(id, request, domain, donor, donor_epoch, bank, bank_epoch, target, target_epoch, loc, fetched,
                                 hashes, transport, transfer_ms, recompute_ms, budget, manifest, ttl, transfer_deadline, abandon,
                                 runs, lineage, action)
                        """)
                .bind("id", ids)
                .bind("request", requests)
                .bind("domain", domains)
                .bind("donor", donors)
                .bind("donorEpoch", donorEpochs)
                .bind("bank", banks)
                .bind("bankEpoch", bankEpochs)
                .bind("target", targets)
                .bind("targetEpoch", targetEpochs)
                .bind("local", locals)
                .bind("fetch", fetches)
                .bind("hashes", hashes)
                .bind("transport", transports)
                .bind("transferMs", transferMs)
                .bind("recomputeMs", recomputeMs)
                .bind("budget", budgets)
                .bind("manifest", manifests)
                .bind("ttl", ttls)
                .bind("transferDeadline", transferDeadlines)
                .bind("abandon", abandons)
                .bind("runs", runs)
                .bind("lineage", lineages)
                .bind("action", actions)
                .then();
    }

    /** The fetched blocks' hashes as a PostgreSQL array literal. */
    private static String fetchedHashes(DonorSelector.Plan p) {
        StringBuilder b = new StringBuilder("{");
        for (int i = 0; i < p.fetchBlocks(); i++) {
            if (i > 0) {
                b.append(',');
            }
            b.append(p.chain()[p.localPrefixBlocks() + i]);
        }
        return b.append('}').toString();
    }

    private static String runsJson(int[] runs) {
        StringBuilder json = new StringBuilder("[");
        for (int i = 0; i < runs.length; i += 2) {
            if (i > 0) {
                json.append(',');
            }
            json.append('[').append(runs[i]).append(',').append(runs[i + 1]).append(']');
        }
        return json.append(']').toString();
    }
}
