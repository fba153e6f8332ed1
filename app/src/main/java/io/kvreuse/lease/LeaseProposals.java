package io.kvreuse.lease;

import io.kvreuse.settings.ReuseSettings;
import io.kvreuse.settings.ReuseSettingsService;
import io.r2dbc.pool.ConnectionPool;
import io.r2dbc.pool.ConnectionPoolConfiguration;
import io.r2dbc.postgresql.PostgresqlConnectionFactoryProvider;
import io.r2dbc.spi.ConnectionFactory;
import io.r2dbc.spi.ValidationDepth;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
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

/**
 * Records the PROPOSED leases selection decides on, with their donors' PIN commands (one per donor
 * rank, visible at once) in the same statement: the lease package is the only writer of {@code
 * lease} and {@code engine_command}. A PROPOSED lease holds nothing yet, so losing it in a crash is
 * safe (the donor refuses an unknown lease, the target recomputes): it is written with {@code
 * synchronous_commit = off}. Every later transition that holds memory is durable. The in-flight
 * caps are enforced in the same statement ({@link InflightCaps}): a proposal that would pass its
 * donor's or target's cap is not written. A group of proposals is one statement and one round trip,
 * since the router waits for it.
 */
@Component
public class LeaseProposals implements DisposableBean {

    /** Concurrent writes at most; proposals that arrive while they run are written together next. */
    static final int WRITERS = 4;

    /** Most proposals in one statement. */
    static final int MAX_GROUP = 256;

    private final ConnectionFactory connections;
    private final DatabaseClient db;
    private final ReuseSettingsService settings;
    private final LeaseMetrics metrics;
    private final GroupCommit<Proposal, Boolean> groups = new GroupCommit<>(WRITERS, MAX_GROUP, this::write);

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
                        Map.of("synchronous_commit", "off", "plan_cache_mode", "force_generic_plan")))
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
            return answers;
        });
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
        int n = group.size();
        String[] lease = new String[n];
        String[] request = new String[n];
        String[] domain = new String[n];
        String[] transport = new String[n];
        String[] donor = new String[n];
        Long[] donorEpoch = new Long[n];
        String[] bank = new String[n];
        Long[] bankEpoch = new Long[n];
        String[] target = new String[n];
        Long[] targetEpoch = new Long[n];
        Integer[] localPrefix = new Integer[n];
        Integer[] hashFrom = new Integer[n];
        Integer[] hashN = new Integer[n];
        String[] slotRuns = new String[n];
        String[] mmLineage = new String[n];
        String[] action = new String[n];
        String[] transferMs = new String[n];
        String[] recomputeMs = new String[n];
        Long[] budget = new Long[n];
        Integer[] manifest = new Integer[n];
        Long[] ttl = new Long[n];
        Long[] transferBy = new Long[n];
        Long[] abandonBy = new Long[n];
        int hashes = 0;
        for (Proposal p : group) {
            hashes += p.fetchedHashes().length;
        }
        Long[] allHashes = new Long[hashes];
        List<InflightCaps.Parties> parties = new ArrayList<>(n);
        int at = 0;
        for (int i = 0; i < n; i++) {
            Proposal p = group.get(i);
            parties.add(new InflightCaps.Parties(p.donorId(), p.targetId()));
            lease[i] = p.leaseId().toString();
            request[i] = p.requestId();
            domain[i] = p.domainId();
            transport[i] = p.transportClass();
            donor[i] = p.donorId().toString();
            donorEpoch[i] = p.donorEpoch();
            bank[i] = p.bankId().toString();
            bankEpoch[i] = p.bankEpoch();
            target[i] = p.targetId().toString();
            targetEpoch[i] = p.targetEpoch();
            localPrefix[i] = p.localPrefixBlocks();
            hashFrom[i] = at;
            hashN[i] = p.fetchedHashes().length;
            for (long h : p.fetchedHashes()) {
                allHashes[at++] = h;
            }
            slotRuns[i] = slotRunsJson(p.slotRuns());
            mmLineage[i] = p.mmLineage();
            action[i] = p.actionType();
            transferMs[i] = Double.toString(p.transferMs());
            recomputeMs[i] = Double.toString(p.recomputeMs());
            budget[i] = p.budgetBytes();
            manifest[i] = p.manifestBytes();
            ttl[i] = micros(p.ttlDeadline());
            transferBy[i] = micros(p.transferDeadline());
            abandonBy[i] = micros(p.abandonDeadline());
        }
        Map<String, Object> columns = new HashMap<>();
        columns.put("lease", lease);
        columns.put("request", request);
        columns.put("domain", domain);
        columns.put("transport", transport);
        columns.put("donor", donor);
        columns.put("donor_epoch", donorEpoch);
        columns.put("bank", bank);
        columns.put("bank_epoch", bankEpoch);
        columns.put("target", target);
        columns.put("target_epoch", targetEpoch);
        columns.put("local_prefix", localPrefix);
        columns.put("hash_from", hashFrom);
        columns.put("hash_n", hashN);
        columns.put("hashes", allHashes);
        columns.put("slot_runs", slotRuns);
        columns.put("mm_lineage", mmLineage);
        columns.put("action", action);
        columns.put("transfer_ms", transferMs);
        columns.put("recompute_ms", recomputeMs);
        columns.put("budget", budget);
        columns.put("manifest", manifest);
        columns.put("ttl", ttl);
        columns.put("transfer_by", transferBy);
        columns.put("abandon_by", abandonBy);
        return InflightCaps.proposeWithinCaps(db, columns, parties, maxPerDonor, maxPerTarget);
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
