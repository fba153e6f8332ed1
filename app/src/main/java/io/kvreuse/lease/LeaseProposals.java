package io.kvreuse.lease;

import static io.kvreuse.store.ArrayLiteral.Type.BIGINT;
import static io.kvreuse.store.ArrayLiteral.Type.DOUBLE;
import static io.kvreuse.store.ArrayLiteral.Type.INTEGER;
import static io.kvreuse.store.ArrayLiteral.Type.TEXT;
import static io.kvreuse.store.ArrayLiteral.column;

import io.kvreuse.domain.TransportClass;
import io.kvreuse.settings.ReuseSettings;
import io.kvreuse.settings.ReuseSettingsService;
import io.kvreuse.store.ArrayLiteral;
import io.kvreuse.store.GroupCommit;
import io.kvreuse.store.PgNotifications;
import io.r2dbc.pool.ConnectionPool;
import io.r2dbc.pool.ConnectionPoolConfiguration;
import io.r2dbc.postgresql.PostgresqlConnectionFactoryProvider;
import io.r2dbc.spi.ConnectionFactory;
import io.r2dbc.spi.ValidationDepth;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.boot.r2dbc.ConnectionFactoryBuilder;
import org.springframework.boot.r2dbc.autoconfigure.R2dbcProperties;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;
import reactor.netty.resources.LoopResources;

/**
 * Records the PROPOSED leases selection decides on, one row each, and then wakes their donors' command
 * polls, which issue the PIN commands (one per donor rank) when they look: the lease package is the
 * only writer of {@code lease} and {@code engine_command}. A PROPOSED lease holds nothing yet, so losing it in a crash is
 * safe (the donor refuses an unknown lease, the target recomputes): it is written with {@code
 * synchronous_commit = off}. Every later transition that holds memory is durable. The in-flight
 * caps are enforced in the same statement ({@link InflightCaps}): a proposal that would pass its
 * donor's or target's cap is not written. A group of proposals is one statement and one round trip,
 * since the router waits for it.
 */
@Component
public class LeaseProposals implements DisposableBean {

    /**
     * Concurrent writes at most; proposals that arrive while one runs are written together next, so
     * a busy control plane sends fewer, larger groups: less PostgreSQL work per selection and less
     * waiting on the parties' in-flight locks than four writers' groups of about one proposal each
     * (docs/selection-latency.md, "One proposal writer"). Four writers had been kept for the
     * per-request lease lifecycles, which one writer slowed while the proposals shared the lease
     * reports' event loop; with a loop of their own it no longer does.
     */
    static final int WRITERS = 1;

    /** Most proposals in one statement. */
    static final int MAX_GROUP = 256;

    private final ConnectionFactory connections;
    private final DatabaseClient db;
    private final ReuseSettingsService settings;
    private final LeaseMetrics metrics;
    private final GroupCommit<Proposal, Boolean> groups = new GroupCommit<>(WRITERS, MAX_GROUP, this::write);
    // one wake-up statement in flight; donors written meanwhile are woken together by the next
    private final GroupCommit<UUID, Boolean> wakes = new GroupCommit<>(1, 4096, this::wake);

    /**
     * The proposals' connections' own event loop: on the driver's shared loops a proposal's answer
     * waited behind the lease reports' result decoding and decisions, which run on the same threads.
     */
    private final LoopResources loops = LoopResources.create("kvreuse-proposals", 1, true);

    /** Its own small pool whose sessions run with {@code synchronous_commit = off}. */
    LeaseProposals(R2dbcProperties r2dbc, ReuseSettingsService settings, LeaseMetrics metrics) {
        this.settings = settings;
        this.metrics = metrics;
        ConnectionFactory factory = ConnectionFactoryBuilder.withUrl(r2dbc.getUrl())
                .username(r2dbc.getUsername())
                .password(r2dbc.getPassword())
                .configure(options -> options.option(
                                PostgresqlConnectionFactoryProvider.OPTIONS,
                                // the proposal statement binds arrays: a custom plan would be made at every write
                                Map.of("synchronous_commit", "off", "plan_cache_mode", "force_generic_plan"))
                        .option(PostgresqlConnectionFactoryProvider.LOOP_RESOURCES, loops))
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
        loops.dispose();
    }

    /**
     * One lease selection decided on, at the epochs of donor, bank and target it saw: {@code
     * fetchedHashes} are the blocks to fetch in chain order, at the donor's slots {@code slotRuns}
     * ((first, count) pairs), after the {@code localPrefixBlocks} the target holds; {@code
     * actionType} is what the hint tells the target ({@code kv.fetch}, {@code kv.fetch_gpu}). An
     * untouched PROPOSED lease expires at {@code ttlDeadline}; the transfer must have ended by {@code
     * transferDeadline}; a lease nobody reports on is given up at {@code abandonDeadline}.
     */
    public record Proposal(
            UUID leaseId,
            String requestId,
            String domainId,
            TransportClass transportClass,
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
     * in-flight cap. Under load the proposals of concurrent selections are grouped ({@link GroupCommit}):
     * while {@link #WRITERS} writes are in flight, new proposals queue and the next free writer
     * admits and inserts all of them in one statement. Alone, a proposal is written at once. If a
     * grouped write fails, each of its proposals is written alone, so one bad row fails only its own
     * selection.
     */
    public Mono<Boolean> record(Proposal p) {
        return groups.submit(p);
    }

    /**
     * {@link #record(Proposal)}, unless the proposal is still queued at {@code startByNanos} ({@link
     * System#nanoTime()}, the selection's deadline): then nothing is written and it completes empty,
     * so a selection that already answered DEADLINE leaves no lease to withdraw.
     */
    public Mono<Boolean> record(Proposal p, long startByNanos) {
        return groups.submit(p, startByNanos);
    }

    private Mono<List<Boolean>> write(List<Proposal> plans) {
        return admitAndInsert(plans).map(admitted -> {
            List<Boolean> answers = new ArrayList<>(admitted.length);
            for (boolean a : admitted) {
                answers.add(a);
            }
            metrics.proposed((int) answers.stream().filter(a -> a).count());
            for (int i = 0; i < plans.size(); i++) {
                if (admitted[i]) {
                    wakes.submit(plans.get(i).donorId()).subscribe(null, e -> {});
                }
            }
            return answers;
        });
    }

    /**
     * Wakes the donors' command polls on every replica (they issue the PIN commands of their new
     * PROPOSED leases when they look): a statement of its own, after the proposals committed, so
     * the notification's commit is neither under the in-flight locks nor before the answer.
     */
    private Mono<List<Boolean>> wake(List<UUID> donors) {
        return db.sql("SELECT count(pg_notify(:channel, d)) AS n FROM unnest(CAST(:donors AS TEXT[])) AS d")
                .bind("channel", PgNotifications.COMMANDS)
                .bind("donors", donors.stream().distinct().map(UUID::toString).toArray(String[]::new))
                .then()
                .thenReturn(Collections.nCopies(donors.size(), Boolean.TRUE));
    }

    /** One statement: lock and count the parties, insert the proposals that fit under the caps. */
    private Mono<boolean[]> admitAndInsert(List<Proposal> plans) {
        ReuseSettings caps = settings.current();
        return proposeWithinCaps(db, plans, caps.maxInflightPerDonor(), caps.maxInflightPerTarget());
    }

    /**
     * Writes {@code group} under the caps in one statement ({@link InflightCaps}): per proposal, in
     * order, whether it was admitted and written.
     */
    static Mono<boolean[]> proposeWithinCaps(
            DatabaseClient db, List<Proposal> group, int maxPerDonor, int maxPerTarget) {
        List<InflightCaps.Parties> parties = group.stream()
                .map(p -> new InflightCaps.Parties(p.donorId(), p.targetId()))
                .toList();
        return InflightCaps.proposeWithinCaps(db, columns(group), parties, maxPerDonor, maxPerTarget);
    }

    /**
     * The group as one array per column of the proposal statement, in group order, each in its text
     * form, typed ({@link ArrayLiteral}).
     */
    static Map<String, Object> columns(List<Proposal> group) {
        Map<String, Object> c = new HashMap<>();
        c.put("lease", column(ArrayLiteral.Type.UUID, group, 36, (a, p) -> a.add(p.leaseId())));
        c.put("request", column(TEXT, group, 36, (a, p) -> a.add(p.requestId())));
        c.put("domain", column(TEXT, group, 16, (a, p) -> a.add(p.domainId())));
        c.put(
                "transport",
                column(TEXT, group, 8, (a, p) -> a.add(p.transportClass().name())));
        c.put("donor", column(ArrayLiteral.Type.UUID, group, 36, (a, p) -> a.add(p.donorId())));
        c.put("donor_epoch", column(BIGINT, group, 4, (a, p) -> a.add(p.donorEpoch())));
        c.put("bank", column(ArrayLiteral.Type.UUID, group, 36, (a, p) -> a.add(p.bankId())));
        c.put("bank_epoch", column(BIGINT, group, 4, (a, p) -> a.add(p.bankEpoch())));
        c.put("target", column(ArrayLiteral.Type.UUID, group, 36, (a, p) -> a.add(p.targetId())));
        c.put("target_epoch", column(BIGINT, group, 4, (a, p) -> a.add(p.targetEpoch())));
        c.put("local_prefix", column(INTEGER, group, 4, (a, p) -> a.add(p.localPrefixBlocks())));
        c.put("slot_runs", column(TEXT, group, 16, (a, p) -> a.add(slotRunsJson(p.slotRuns()))));
        c.put("mm_lineage", column(TEXT, group, 4, (a, p) -> a.add(p.mmLineage())));
        c.put("action", column(TEXT, group, 12, (a, p) -> a.add(p.actionType())));
        c.put("transfer_ms", column(DOUBLE, group, 8, (a, p) -> a.add(p.transferMs())));
        c.put("recompute_ms", column(DOUBLE, group, 8, (a, p) -> a.add(p.recomputeMs())));
        c.put("budget", column(BIGINT, group, 10, (a, p) -> a.add(p.budgetBytes())));
        c.put("manifest", column(INTEGER, group, 6, (a, p) -> a.add(p.manifestBytes())));
        c.put("ttl", column(BIGINT, group, 16, (a, p) -> a.add(micros(p.ttlDeadline()))));
        c.put("transfer_by", column(BIGINT, group, 16, (a, p) -> a.add(micros(p.transferDeadline()))));
        c.put("abandon_by", column(BIGINT, group, 16, (a, p) -> a.add(micros(p.abandonDeadline()))));
        putHashes(group, c);
        return c;
    }

    /**
     * Every proposal's fetched hashes in one array ({@code hashes}), each proposal's a slice of it:
     * from {@code hash_from}, {@code hash_n} of them.
     */
    private static void putHashes(List<Proposal> group, Map<String, Object> columns) {
        ArrayLiteral from = new ArrayLiteral(INTEGER, group.size(), 5);
        ArrayLiteral count = new ArrayLiteral(INTEGER, group.size(), 3);
        int total = group.stream().mapToInt(p -> p.fetchedHashes().length).sum();
        ArrayLiteral hashes = new ArrayLiteral(BIGINT, total, 20);
        int at = 0;
        for (Proposal p : group) {
            long[] fetched = p.fetchedHashes();
            from.add(at);
            count.add(fetched.length);
            hashes.addAll(fetched);
            at += fetched.length;
        }
        columns.put("hash_from", from.build());
        columns.put("hash_n", count.build());
        columns.put("hashes", hashes.build());
    }

    /** {@code (first, count)} pairs as the lease row's {@code source_slot_runs}: {@code [[first, count], …]}. */
    static String slotRunsJson(int[] runs) {
        StringBuilder s = new StringBuilder(2 + runs.length * 6).append('[');
        for (int i = 0; i + 1 < runs.length; i += 2) {
            s.append(i == 0 ? "[" : ",[")
                    .append(runs[i])
                    .append(',')
                    .append(runs[i + 1])
                    .append(']');
        }
        return s.append(']').toString();
    }

    /** An instant in epoch microseconds, rounded as PostgreSQL rounds a timestamp's fraction. */
    static long micros(Instant t) {
        return Math.addExact(Math.multiplyExact(t.getEpochSecond(), 1_000_000L), (t.getNano() + 500) / 1000);
    }
}
