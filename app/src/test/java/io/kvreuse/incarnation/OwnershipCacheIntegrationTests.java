package io.kvreuse.incarnation;

import static io.kvreuse.incarnation.Engines.newHost;
import static io.kvreuse.incarnation.Engines.registration;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvreuse.security.ApiPrincipal;
import io.kvreuse.security.Role;
import io.kvreuse.support.IntegrationTest;
import io.kvreuse.support.TestTokens;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.transaction.reactive.TransactionalOperator;

/**
 * The command channel's ownership check answers from memory, and every change of the incarnation
 * still reaches it: at once when this replica made it, through the change feed when another
 * replica did, within {@link OwnershipCache#MAX_AGE} when the notification was lost.
 */
@IntegrationTest
class OwnershipCacheIntegrationTests {

    @Autowired
    WebTestClient http;

    @Autowired
    TestTokens tokens;

    @Autowired
    DatabaseClient db;

    @Autowired
    TransactionalOperator tx;

    @Autowired
    Incarnations incarnations;

    @Autowired
    ApplicationEventPublisher events;

    Engines engines;
    String engine;
    String subject;
    String host;
    UUID id;
    ApiPrincipal owner;

    @BeforeEach
    void setUp() {
        engines = new Engines(http, db);
        subject = "cache-" + UUID.randomUUID();
        engine = tokens.mint(Role.ENGINE, subject);
        host = newHost();
        id = engines.ready(engine, registration(engines.domain(tokens.operator(), 1), host, 0));
        owner = new ApiPrincipal(UUID.randomUUID(), Role.ENGINE, subject);
        assertThat(epoch(owner)).isEqualTo(2);
    }

    @Test
    void changeThisReplicaCommitsIsSeenAtOnce() {
        engines.ok(engine, id, "drain");
        IncarnationOwnership now = incarnations.requireOwnership(id, owner).block();
        assertThat(now.fencingEpoch()).isEqualTo(3);
        assertThat(now.state()).isEqualTo(IncarnationState.DRAINING);
    }

    @Test
    void publishedChangeDropsTheEntryWithoutWaitingForTheNotification() throws InterruptedException {
        bumpUnnoticed();
        events.publishEvent(new IncarnationStateChanged(id, IncarnationState.READY, IncarnationState.READY, 3));
        assertThat(epoch(owner)).isEqualTo(3);
    }

    @Test
    void changeAnotherReplicaCommitsIsSeenThroughItsNotification() {
        for (int attempt = 0; ; attempt++) {
            long filled = freshEntry();
            db.sql("UPDATE engine_incarnation SET fencing_epoch = fencing_epoch + 1 WHERE incarnation_id = :id")
                    .bind("id", id)
                    .then()
                    .block();
            long expected = 3 + attempt;
            waitForEpoch(expected, Duration.ofSeconds(10));
            if (System.nanoTime() - filled < OwnershipCache.MAX_AGE.toNanos()) {
                return; // seen before the entry could have expired: the notification dropped it
            }
            assertThat(attempt)
                    .as("the machine stalled past MAX_AGE every time")
                    .isLessThan(5);
        }
    }

    @Test
    void changeWhoseNotificationWasLostIsSeenWithinTheBound() throws InterruptedException {
        long filled = bumpUnnoticed();
        waitForEpoch(3, OwnershipCache.MAX_AGE.plusSeconds(3));
        assertThat(Duration.ofNanos(System.nanoTime() - filled))
                .isLessThanOrEqualTo(OwnershipCache.MAX_AGE.plusSeconds(2));
    }

    @Test
    void warmEntryStillRefusesOtherPrincipalsAndAdmitsTheHostsAgent() {
        ApiPrincipal otherEngine = new ApiPrincipal(UUID.randomUUID(), Role.ENGINE, "other-" + UUID.randomUUID());
        ApiPrincipal router = new ApiPrincipal(UUID.randomUUID(), Role.ROUTER, subject);
        ApiPrincipal foreignAgent = new ApiPrincipal(UUID.randomUUID(), Role.AGENT, subject, newHost());
        ApiPrincipal hostAgent = new ApiPrincipal(UUID.randomUUID(), Role.AGENT, "agent-" + UUID.randomUUID(), host);
        ApiPrincipal operator = new ApiPrincipal(UUID.randomUUID(), Role.OPERATOR, "op");
        for (ApiPrincipal refused : new ApiPrincipal[] {otherEngine, router, foreignAgent}) {
            assertThatThrownBy(() -> incarnations.requireOwnership(id, refused).block())
                    .as(refused.toString())
                    .isInstanceOf(NoSuchIncarnationException.class);
        }
        assertThat(epoch(hostAgent)).isEqualTo(2);
        assertThat(epoch(operator)).isEqualTo(2);
        assertThatThrownBy(() ->
                        incarnations.requireOwnership(UUID.randomUUID(), owner).block())
                .isInstanceOf(NoSuchIncarnationException.class);
    }

    /** Drops the owner's entry and reads it again; answers when that read started. */
    private long freshEntry() {
        events.publishEvent(new IncarnationStateChanged(id, IncarnationState.READY, IncarnationState.READY, 0));
        long start = System.nanoTime();
        epoch(owner);
        return start;
    }

    /**
     * Fills the entry at epoch 2, commits a bump to 3 that notifies nobody and checks the entry still
     * answers 2; answers when the entry was read. A machine too slow to check within {@link
     * OwnershipCache#MAX_AGE} tries again.
     */
    private long bumpUnnoticed() throws InterruptedException {
        Thread.sleep(200); // the notifications of the set-up's own changes arrive first
        for (int attempt = 0; ; attempt++) {
            setEpochQuietly(2);
            long filled = freshEntry();
            assertThat(epoch(owner)).isEqualTo(2);
            setEpochQuietly(3);
            long seen = epoch(owner);
            if (System.nanoTime() - filled < OwnershipCache.MAX_AGE.toNanos()) {
                assertThat(seen).as("answered from memory").isEqualTo(2);
                return filled;
            }
            assertThat(attempt)
                    .as("the machine stalled past MAX_AGE every time")
                    .isLessThan(5);
        }
    }

    /** Commits an epoch that notifies nobody: a replica role session fires no triggers. */
    private void setEpochQuietly(long epoch) {
        db.sql("SET LOCAL session_replication_role = replica")
                .then()
                .then(db.sql("UPDATE engine_incarnation SET fencing_epoch = :e WHERE incarnation_id = :id")
                        .bind("e", epoch)
                        .bind("id", id)
                        .then())
                .as(tx::transactional)
                .block();
    }

    private long epoch(ApiPrincipal p) {
        return incarnations.requireOwnership(id, p).block().fencingEpoch();
    }

    private Duration waitForEpoch(long expected, Duration limit) {
        long start = System.nanoTime();
        while (epoch(owner) != expected) {
            assertThat(Duration.ofNanos(System.nanoTime() - start))
                    .as("epoch %d seen", expected)
                    .isLessThan(limit);
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        }
        return Duration.ofNanos(System.nanoTime() - start);
    }
}
