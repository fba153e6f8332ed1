package io.kvreuse.lease;

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
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Function;
import java.util.function.IntFunction;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.boot.r2dbc.ConnectionFactoryBuilder;
import org.springframework.boot.r2dbc.autoconfigure.R2dbcProperties;
import org.springframework.r2dbc.connection.R2dbcTransactionManager;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.stereotype.Component;
import org.springframework.transaction.reactive.TransactionalOperator;
import reactor.core.publisher.Mono;

/**
 * Records the PROPOSED leases selection decides on, with their donors' PIN commands (one per donor
 * rank, visible at once) in the same statement: the lease package is the only writer of {@code
 * lease} and {@code engine_command}. A PROPOSED lease holds nothing yet, so losing it in a crash is
 * safe (the donor refuses an unknown lease, the target recomputes): it is written with {@code
 * synchronous_commit = off}. Every later transition that holds memory is durable. The in-flight
 * caps are enforced in the same transaction ({@link InflightCaps}): a proposal that would pass its
 * donor's or target's cap is not written.
 */
@Component
public class LeaseProposals implements DisposableBean {

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
                .description(LeaseMetrics.TRANSITIONS_HELP)
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

    /** Concurrent writes at most; proposals that arrive while they run are written together next. */
    static final int WRITERS = 4;

    /** Most proposals in one statement. */
    static final int MAX_GROUP = 256;

    /**
     * One lease selection decided on.
     *
     * @param leaseId the new lease's id (the hint carries it)
     * @param requestId the router's request id
     * @param domainId the layout domain of donor and target
     * @param transportClass the domain's transport class
     * @param donorId the donor incarnation, pinned at {@code donorEpoch}
     * @param donorEpoch the donor's fencing epoch the selection saw
     * @param bankId the donor's retained bank, at {@code bankEpoch}
     * @param bankEpoch the bank's epoch the selection saw
     * @param targetId the target incarnation, at {@code targetEpoch}
     * @param targetEpoch the target's fencing epoch the selection saw
     * @param localPrefixBlocks blocks the target already holds
     * @param fetchedHashes the sequence hashes of the blocks to fetch, in chain order
     * @param slotRuns the fetched blocks' source slots as (first, count) pairs
     * @param mmLineage the multimodal lineage of the chain, if any
     * @param actionType the action the hint tells the target to take ({@code kv.fetch}, {@code kv.fetch_gpu})
     * @param transferMs predicted transfer time
     * @param recomputeMs predicted recompute time of the fetched range
     * @param budgetBytes bytes the target may receive
     * @param manifestBytes size of the hint's manifest
     * @param ttlDeadline when an untouched PROPOSED lease expires
     * @param transferDeadline when the transfer must have ended
     * @param abandonDeadline when a lease nobody reports on is given up
     */
    public record Proposal(
            UUID leaseId,
            String requestId,
            String domainId,
            String transportClass,
            UUID donorId,
            long donorEpoch,
            UUID bankId,
            long bankEpoch,
            UUID targetId,
            long targetEpoch,
            int localPrefixBlocks,
            long[] fetchedHashes,
            int[] slotRuns,
            @Nullable String mmLineage,
            String actionType,
            double transferMs,
            double recomputeMs,
            long budgetBytes,
            int manifestBytes,
            Instant ttlDeadline,
            Instant transferDeadline,
            Instant abandonDeadline) {}

    private final GroupCommit<Proposal, Boolean> groups = new GroupCommit<>(WRITERS, MAX_GROUP, this::write);

    /**
     * Whether PostgreSQL has stopped answering proposals: a write has been in flight for {@code
     * after} without any write ending. A selection then answers STORE_UNAVAILABLE at once instead of
     * queueing a write that could only end after its router's deadline.
     */
    public boolean stalled(Duration after) {
        return groups.stalled(after);
    }

    /**
     * Records a PROPOSED lease: true when written, false when its donor or target is at its
     * in-flight cap. Under load the proposals of concurrent selections are grouped ({@link
     * GroupCommit}): while {@link #WRITERS} writes are in flight, new proposals queue and the next
     * free writer admits and inserts all of them in one transaction. Alone, a proposal is written at
     * once. If a grouped write fails, each of its proposals is written alone, so one bad row fails
     * only its own selection.
     */
    public Mono<Boolean> record(Proposal p) {
        return groups.submit(p);
    }

    private Mono<List<Boolean>> write(List<Proposal> plans) {
        return admitAndInsert(plans).map(admitted -> {
            List<Boolean> answers = new ArrayList<>(admitted.length);
            for (boolean a : admitted) {
                answers.add(a);
            }
            proposed.increment(answers.stream().filter(a -> a).count());
            return answers;
        });
    }

    /** One transaction: lock and count the parties, then insert the proposals that fit under the caps. */
    private Mono<boolean[]> admitAndInsert(List<Proposal> plans) {
        ReuseSettings caps = settings.current();
        List<InflightCaps.Parties> parties = plans.stream()
                .map(p -> new InflightCaps.Parties(p.donorId(), p.targetId()))
                .toList();
        return InflightCaps.lockAndCount(
                        db, parties, clock.instant(), caps.maxInflightPerDonor(), caps.maxInflightPerTarget())
                .flatMap(counts -> {
                    boolean[] admitted = InflightCaps.admit(
                            parties, counts, caps.maxInflightPerDonor(), caps.maxInflightPerTarget());
                    List<Proposal> fit = new ArrayList<>(plans.size());
                    for (int i = 0; i < admitted.length; i++) {
                        if (admitted[i]) {
                            fit.add(plans.get(i));
                        }
                    }
                    return (fit.isEmpty() ? Mono.<Void>empty() : insert(fit)).thenReturn(admitted);
                })
                .as(tx::transactional);
    }

    /** The leases and, in the same statement, one PIN command per donor rank, visible at once. */
    private static final String INSERT = """
            WITH proposed AS (
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
            RETURNING lease_id, donor_incarnation_id, created_at)
            INSERT INTO engine_command (command_id, incarnation_id, lease_id, type, rank, created_at, visible_at)
            SELECT gen_random_uuid(), p.donor_incarnation_id, p.lease_id, 'PIN', r.rank, p.created_at, '-infinity'
            FROM proposed p JOIN incarnation_rank r ON r.incarnation_id = p.donor_incarnation_id
            """;

    private Mono<Void> insert(List<Proposal> plans) {
        DatabaseClient.GenericExecuteSpec spec = db.sql(INSERT);
        for (Map.Entry<String, Object[]> column : columns(plans).entrySet()) {
            spec = spec.bind(column.getKey(), column.getValue());
        }
        return spec.then();
    }

    /** Each bound parameter of {@link #INSERT}: one array element per proposal. */
    private static Map<String, Object[]> columns(List<Proposal> plans) {
        Map<String, Object[]> c = new LinkedHashMap<>();
        c.put("id", column(plans, p -> p.leaseId().toString(), String[]::new));
        c.put("request", column(plans, Proposal::requestId, String[]::new));
        c.put("domain", column(plans, Proposal::domainId, String[]::new));
        c.put("donor", column(plans, p -> p.donorId().toString(), String[]::new));
        c.put("donorEpoch", column(plans, Proposal::donorEpoch, Long[]::new));
        c.put("bank", column(plans, p -> p.bankId().toString(), String[]::new));
        c.put("bankEpoch", column(plans, Proposal::bankEpoch, Long[]::new));
        c.put("target", column(plans, p -> p.targetId().toString(), String[]::new));
        c.put("targetEpoch", column(plans, Proposal::targetEpoch, Long[]::new));
        c.put("local", column(plans, Proposal::localPrefixBlocks, Integer[]::new));
        c.put("fetch", column(plans, p -> p.fetchedHashes().length, Integer[]::new));
        c.put("hashes", column(plans, p -> arrayLiteral(p.fetchedHashes()), String[]::new));
        c.put("transport", column(plans, Proposal::transportClass, String[]::new));
        c.put("transferMs", column(plans, Proposal::transferMs, Double[]::new));
        c.put("recomputeMs", column(plans, Proposal::recomputeMs, Double[]::new));
        c.put("budget", column(plans, Proposal::budgetBytes, Long[]::new));
        c.put("manifest", column(plans, Proposal::manifestBytes, Integer[]::new));
        c.put("ttl", column(plans, p -> p.ttlDeadline().toString(), String[]::new));
        c.put("transferDeadline", column(plans, p -> p.transferDeadline().toString(), String[]::new));
        c.put("abandon", column(plans, p -> p.abandonDeadline().toString(), String[]::new));
        c.put("runs", column(plans, p -> runsJson(p.slotRuns()), String[]::new));
        c.put("lineage", column(plans, Proposal::mmLineage, String[]::new));
        c.put("action", column(plans, Proposal::actionType, String[]::new));
        return c;
    }

    private static <T> T[] column(List<Proposal> plans, Function<Proposal, @Nullable T> value, IntFunction<T[]> array) {
        return plans.stream().map(value).toArray(array);
    }

    /** Hashes as a PostgreSQL array literal. */
    private static String arrayLiteral(long[] hashes) {
        StringBuilder b = new StringBuilder("{");
        for (int i = 0; i < hashes.length; i++) {
            if (i > 0) {
                b.append(',');
            }
            b.append(hashes[i]);
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
