package io.kvreuse.selection;

import io.r2dbc.pool.ConnectionPool;
import io.r2dbc.pool.ConnectionPoolConfiguration;
import io.r2dbc.postgresql.PostgresqlConnectionFactoryProvider;
import io.r2dbc.postgresql.codec.Json;
import io.r2dbc.spi.ConnectionFactory;
import io.r2dbc.spi.ValidationDepth;
import java.time.Duration;
import java.time.ZoneOffset;
import java.util.Map;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.boot.r2dbc.ConnectionFactoryBuilder;
import org.springframework.boot.r2dbc.autoconfigure.R2dbcProperties;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;

/**
 * Records a selection's PROPOSED lease. It holds nothing yet, so losing it in a crash is safe
 * (the donor refuses an unknown lease, the target recomputes): it is written with
 * {@code synchronous_commit = off}. Every later transition that holds memory is durable.
 */
@Component
class LeaseProposals implements DisposableBean {

    private final ConnectionFactory connections;
    private final DatabaseClient db;

    /** Its own small pool whose sessions run with {@code synchronous_commit = off}: one round trip a proposal. */
    LeaseProposals(R2dbcProperties r2dbc) {
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

    Mono<Void> record(DonorSelector.Plan p) {
        Long[] hashes = new Long[p.fetchBlocks()];
        for (int i = 0; i < hashes.length; i++) {
            hashes[i] = p.chain()[p.localPrefixBlocks() + i];
        }
        return db.sql("""
                                INSERT INTO lease (lease_id, request_id, state, domain_id, donor_incarnation_id, donor_epoch, bank_id, bank_epoch,
                                    target_incarnation_id, target_epoch, local_prefix_blocks, fetch_blocks, seq_hashes, transport_class,
                                    predicted_transfer_ms, predicted_recompute_ms, budget_bytes, manifest_bytes, ttl_deadline,
                                    transfer_deadline, abandon_deadline, source_slot_runs, mm_lineage, action_type)
                                VALUES (:id, :request, 'PROPOSED', :domain, :donor, :donorEpoch, :bank, :bankEpoch, :target, :targetEpoch,
                                    :local, :fetch, :hashes, :transport, :transferMs, :recomputeMs, :budget, :manifest, :ttl, :transferDeadline,
                                    :abandon, :runs, :lineage, :action)
                                """)
                .bind("id", p.leaseId())
                .bind("request", p.requestId())
                .bind("domain", p.domain().id())
                .bind("donor", p.donor().id())
                .bind("donorEpoch", p.donor().fencingEpoch())
                .bind("bank", p.bankId())
                .bind("bankEpoch", p.bankEpoch())
                .bind("target", p.target().id())
                .bind("targetEpoch", p.target().fencingEpoch())
                .bind("local", p.localPrefixBlocks())
                .bind("fetch", p.fetchBlocks())
                .bind("hashes", hashes)
                .bind("transport", p.domain().transportClass())
                .bind("transferMs", p.transferMs())
                .bind("recomputeMs", p.recomputeMs())
                .bind("budget", p.budgetBytes())
                .bind("manifest", p.manifestBytes())
                .bind("ttl", p.leaseDeadline().atOffset(ZoneOffset.UTC))
                .bind("transferDeadline", p.transferDeadline().atOffset(ZoneOffset.UTC))
                .bind("abandon", p.abandonDeadline().atOffset(ZoneOffset.UTC))
                .bind("runs", Json.of(runsJson(p.slotRuns())))
                .bind("lineage", io.kvreuse.store.Sql.orNull(p.mmLineage(), String.class))
                .bind("action", p.cpu() ? "kv.fetch" : "kv.fetch_gpu")
                .then();
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
