package io.kvreuse.lease;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.support.Fleet;
import io.kvreuse.support.Fleet.Engine;
import io.kvreuse.support.IntegrationTest;
import io.kvreuse.support.MutableClock;
import io.kvreuse.support.TestTokens;
import io.r2dbc.spi.Connection;
import io.r2dbc.spi.ConnectionFactory;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.test.web.reactive.server.WebTestClient;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The locked read of a report group (V97): one call locks the leases and reads them, and the read
 * still sees what the transaction that held a lock committed, children included.
 */
@IntegrationTest
class LeaseAggregatesIntegrationTests {

    private static final Duration BOUND = Duration.ofSeconds(20);

    @Autowired
    MutableClock clock;

    @Autowired
    WebTestClient http;

    @Autowired
    TestTokens tokens;

    @Autowired
    DatabaseClient db;

    @Autowired
    ConnectionFactory connections;

    @Autowired
    LeaseAggregates aggregates;

    @Test
    void aReadThatWaitedForALockSeesTheChildrenItsHolderCommitted() throws Exception {
        Fleet fleet = new Fleet(http, tokens);
        String domain = fleet.domain(2, "GPU_CUDA_IPC");
        String host = Fleet.host();
        Engine decode = fleet.ready("DECODE", domain, 2, host);
        String bank = fleet.bank(decode, 2, 64);
        Engine target = fleet.ready("PREFILL", domain, 2, host);
        LeaseProposals.Proposal p = TestProposals.proposal(domain, decode.id(), bank, target.id(), clock.instant());
        assertThat(LeaseProposals.proposeWithinCaps(db, List.of(p), 100, 100).block(BOUND))
                .containsExactly(true);
        UUID command = UUID.randomUUID();

        Connection holder = Mono.from(connections.create()).block(BOUND);
        try {
            // another report's transaction: the lease locked, a command of it written, not yet committed
            Mono.from(holder.beginTransaction())
                    .thenMany(run(holder, "SELECT 1 FROM lease WHERE lease_id = $1 FOR UPDATE", p.leaseId()))
                    .thenMany(run(
                            holder,
                            "INSERT INTO engine_command (command_id, incarnation_id, lease_id, type, rank, created_at,"
                                    + " visible_at) VALUES ($1, $2, $3, 'PIN', 0, now(), now())",
                            command,
                            UUID.fromString(decode.id()),
                            p.leaseId()))
                    .then()
                    .block(BOUND);

            CompletableFuture<Map<UUID, LeaseAggregate>> read =
                    aggregates.lock(Set.of(p.leaseId()), List.of()).toFuture();
            awaitWaitingOnALock();
            assertThat(read).as("the locked read waits for the holder").isNotDone();

            Mono.from(holder.commitTransaction()).block(BOUND);
            LeaseAggregate lease = read.get(BOUND.toSeconds(), TimeUnit.SECONDS).get(p.leaseId());
            assertThat(lease).isNotNull();
            assertThat(lease.commands())
                    .as("the read's snapshot was taken after the lock was granted")
                    .extracting(LeaseAggregate.Command::commandId)
                    .containsExactly(command);
        } finally {
            Mono.from(holder.close()).block(BOUND);
        }
    }

    @Test
    void unknownLeasesAndOtherIncarnationsCommandsLockNothing() {
        assertThat(aggregates
                        .lock(Set.of(UUID.randomUUID()), List.of(Map.entry(UUID.randomUUID(), UUID.randomUUID())))
                        .block(BOUND))
                .isEmpty();
    }

    private static Flux<Object> run(Connection c, String sql, Object... args) {
        var statement = c.createStatement(sql);
        for (int i = 0; i < args.length; i++) {
            statement.bind("$" + (i + 1), args[i]);
        }
        return Flux.from(statement.execute()).flatMap(r -> r.map((row, meta) -> 1));
    }

    private void awaitWaitingOnALock() throws InterruptedException {
        long until = System.nanoTime() + BOUND.toNanos();
        while (System.nanoTime() < until) {
            Long waiting =
                    db.sql("""
                            SELECT count(*) AS n FROM pg_stat_activity
                            WHERE wait_event_type = 'Lock' AND query LIKE '%kvreuse_lock_lease_aggregates%'
                              AND pid <> pg_backend_pid()
                            """).map((r, m) -> r.get("n", Long.class)).one().block(BOUND);
            if (waiting != null && waiting > 0) {
                return;
            }
            Thread.sleep(20);
        }
        throw new AssertionError("the locked read never waited for the lease's lock");
    }
}
