package io.kvreuse.incarnation;

import static io.kvreuse.incarnation.Engines.expectProblem;
import static io.kvreuse.incarnation.Engines.newHost;
import static io.kvreuse.incarnation.Engines.registration;
import static io.kvreuse.incarnation.Engines.with;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.orders.AgentLivenessSweeper;
import io.kvreuse.security.Role;
import io.kvreuse.support.IntegrationTest;
import io.kvreuse.support.KeyShareLock;
import io.kvreuse.support.MutableClock;
import io.kvreuse.support.TestTokens;
import io.kvreuse.support.UnwatchedTime;
import io.micrometer.core.instrument.MeterRegistry;
import io.r2dbc.spi.Connection;
import io.r2dbc.spi.ConnectionFactory;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.IntStream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.context.ApplicationEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.PayloadApplicationEvent;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.test.web.reactive.server.WebTestClient;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

@IntegrationTest
class LivenessSweeperIntegrationTests {

    private static final String SWEEPER = " by system:liveness";

    @Autowired
    WebTestClient http;

    @Autowired
    TestTokens tokens;

    @Autowired
    DatabaseClient db;

    @Autowired
    MutableClock clock;

    @Autowired
    LivenessSweeper sweeper;

    @Autowired
    ConnectionFactory connections;

    @Autowired
    ConfigurableApplicationContext context;

    @Autowired
    MeterRegistry meters;

    Engines engines;
    String engine;
    String domain;

    @BeforeEach
    void setUp() {
        engines = new Engines(http, db);
        engine = tokens.mint(Role.ENGINE);
        domain = engines.domain(tokens.operator(), 2);
    }

    @Test
    void missedHeartbeatsMakeSuspectHeartbeatsRecoverAndLongSilenceMakesLost() {
        String name = "pod-" + UUID.randomUUID();
        String host = newHost();
        UUID id = engines.ready(engine, with(registration(domain, host, 0, 1), "stableName", name));

        clock.advance(Duration.ofSeconds(11));
        sweep();
        assertThat(engines.view(engine, id)).containsEntry("state", "SUSPECT").containsEntry("fencingEpoch", 3);

        // the engine learns it was fenced, then resumes at the current epoch: SUSPECT is not death
        expectProblem(engines.report(engine, id, "heartbeat", 2L), 409, "stale-epoch")
                .jsonPath("$.currentEpoch")
                .isEqualTo(3);
        assertThat(Engines.json(engines.report(engine, id, "heartbeat", 3L)
                        .expectStatus()
                        .isOk()))
                .containsEntry("state", "READY")
                .containsEntry("fencingEpoch", 4);

        clock.advance(Duration.ofSeconds(11));
        sweep();
        assertThat(engines.view(engine, id)).containsEntry("state", "SUSPECT").containsEntry("fencingEpoch", 5);
        clock.advance(Duration.ofSeconds(60));
        sweep();
        assertThat(engines.view(engine, id)).containsEntry("state", "LOST").containsEntry("fencingEpoch", 6);

        expectProblem(engines.report(engine, id, "heartbeat", null), 409, "incarnation-lost")
                .jsonPath("$.currentState")
                .isEqualTo("LOST");
        expectProblem(engines.report(engine, id, "exit", null), 409, "incarnation-lost");
        expectProblem(engines.report(engine, id, "drain", null), 409, "incarnation-lost");
        assertThat(engines.view(engine, id)).containsEntry("fencingEpoch", 6);

        String actor = " by engine:" + engines.view(engine, id).get("ownerSubject");
        assertThat(engines.transitions(id))
                .containsExactly(
                        "null>REGISTERED@1" + actor,
                        "REGISTERED>READY@2" + actor,
                        "READY>SUSPECT@3" + SWEEPER,
                        "SUSPECT>READY@4" + actor,
                        "READY>SUSPECT@5" + SWEEPER,
                        "SUSPECT>LOST@6" + SWEEPER);

        // an unclean end keeps the stable name and the GPUs held until an operator cleans up
        String successor = tokens.mint(Role.ENGINE);
        expectProblem(
                        engines.register(successor, with(registration(domain, newHost(), 0, 1), "stableName", name)),
                        409,
                        "stable-name-held")
                .jsonPath("$.holderState")
                .isEqualTo("LOST")
                .jsonPath("$.holderIncarnationId")
                .isEqualTo(id.toString());
        expectProblem(engines.register(successor, registration(domain, host, 1, 5)), 409, "gpu-ordinal-in-use");
    }

    @Test
    void silenceLongerThanLostAfterShowsAsSuspectForOneSweepBeforeLost() {
        UUID id = engines.ready(engine, registration(domain, newHost(), 0, 1));
        clock.advance(Duration.ofSeconds(61));
        // the scheduled sweeper (every second, same clock) may take one of the two steps between
        // these: what must hold is that no sweep takes both
        List<LivenessSweeper.SweepResult> ours = List.of(sweep(), sweep());
        assertThat(engines.view(engine, id)).containsEntry("state", "LOST").containsEntry("fencingEpoch", 4);
        for (LivenessSweeper.SweepResult r : ours) {
            assertThat(r.transitions())
                    .filteredOn(c -> c.incarnationId().equals(id))
                    .hasSizeLessThanOrEqualTo(1);
        }
        assertThat(engines.transitions(id))
                .endsWith("READY>SUSPECT@3" + SWEEPER, "SUSPECT>LOST@4" + SWEEPER)
                .noneMatch(t -> t.startsWith("READY>LOST"));
    }

    @Test
    void scheduledSweeperRunsWithoutBeingCalled() throws InterruptedException {
        UUID id = engines.ready(engine, registration(domain, newHost(), 0, 1));
        clock.advance(Duration.ofSeconds(11));
        long deadline = System.nanoTime() + Duration.ofSeconds(15).toNanos();
        while (!"SUSPECT".equals(engines.view(engine, id).get("state")) && System.nanoTime() < deadline) {
            Thread.sleep(100);
        }
        assertThat(engines.view(engine, id)).containsEntry("state", "SUSPECT").containsEntry("fencingEpoch", 3);
    }

    @Test
    void registrationThatNeverHeartbeatsGoesSuspect() {
        UUID id = engines.registered(engine, registration(domain, newHost(), 0, 1));
        clock.advance(Duration.ofSeconds(5));
        sweep();
        assertThat(engines.view(engine, id)).containsEntry("state", "REGISTERED");
        clock.advance(Duration.ofSeconds(6));
        sweep();
        assertThat(engines.view(engine, id)).containsEntry("state", "SUSPECT").containsEntry("fencingEpoch", 2);
    }

    @Test
    void concurrentSweepsNeverMoveAnIncarnationTwice() {
        List<UUID> ids = IntStream.range(0, 6)
                .mapToObj(i -> engines.ready(engine, registration(domain, newHost(), 0, 1)))
                .toList();
        clock.advance(Duration.ofSeconds(11));
        List<LivenessSweeper.SweepResult> results = Flux.range(0, 4)
                .flatMap(i -> sweeper.sweepOnce(), 4)
                .collectList()
                .block(Duration.ofSeconds(30));
        assertThat(results).hasSize(4);
        sweep(); // holding the lock proves any scheduled sweep that raced these has committed
        for (UUID id : ids) {
            assertThat(engines.view(engine, id))
                    .containsEntry("state", "SUSPECT")
                    .containsEntry("fencingEpoch", 3);
            assertThat(engines.transitions(id))
                    .filteredOn(t -> t.startsWith("READY>SUSPECT"))
                    .hasSize(1);
        }
        long movedByTheseSweeps = results.stream()
                .flatMap(r -> r.transitions().stream())
                .filter(c -> ids.contains(c.incarnationId()))
                .count();
        assertThat(movedByTheseSweeps).isLessThanOrEqualTo(ids.size());
    }

    @Test
    void onlyTheLockHolderSweeps() {
        UUID id = engines.ready(engine, registration(domain, newHost(), 0, 1));
        double skipped =
                meters.counter("kvreuse.liveness.sweeps", "outcome", "skipped").count();
        // another replica leads: it holds the sweeper lock on its own session, taken before the
        // silence begins so that this replica's scheduled sweep cannot move the engine either
        LivenessSweeper.SweepResult whileOtherLeads = Mono.usingWhen(
                        connections.create(),
                        conn -> lock(conn, "pg_advisory_lock")
                                .then(Mono.fromRunnable(() -> clock.advance(Duration.ofSeconds(11))))
                                .then(sweeper.sweepOnce())
                                .flatMap(r -> lock(conn, "pg_advisory_unlock").thenReturn(r)),
                        Connection::close)
                .block(Duration.ofSeconds(30));
        assertThat(whileOtherLeads.ran()).isFalse();
        assertThat(whileOtherLeads.transitions()).isEmpty();
        assertThat(meters.counter("kvreuse.liveness.sweeps", "outcome", "skipped")
                        .count())
                .isGreaterThan(skipped);
        assertThat(engines.view(engine, id)).containsEntry("state", "READY").containsEntry("fencingEpoch", 2);
        sweep();
        assertThat(engines.view(engine, id)).containsEntry("state", "SUSPECT").containsEntry("fencingEpoch", 3);
    }

    @Test
    void heartbeatsAHungDatabaseHeldAreNoSilenceUntilSuspectAfterPassedSinceItAnswered() {
        UUID id = engines.ready(engine, registration(domain, newHost(), 0, 1));
        sweep();
        // the database hangs past suspect-after: no sweep fails, none reaches it, no heartbeat lands
        clock.advanceUnwatched(Duration.ofSeconds(11));
        try {
            sweep();
            assertThat(engines.view(engine, id)).containsEntry("state", "READY").containsEntry("fencingEpoch", 2);
            // from its first answer the replica watches again; a silence of suspect-after since then counts
            clock.advance(Duration.ofSeconds(9));
            sweep();
            assertThat(engines.view(engine, id)).containsEntry("state", "READY");
            clock.advance(Duration.ofSeconds(2));
            sweep();
            assertThat(engines.view(engine, id))
                    .containsEntry("state", "SUSPECT")
                    .containsEntry("fencingEpoch", 3);
            assertThat(engines.transitions(id)).containsOnlyOnce("READY>SUSPECT@3" + SWEEPER);
        } finally {
            UnwatchedTime.settle(clock, sweeper, agentSweeper);
        }
    }

    @Autowired
    AgentLivenessSweeper agentSweeper;

    @Test
    void anIncarnationAnOpenTransactionReferencesStillMovesInThisSweep() {
        UUID id = engines.ready(engine, registration(domain, newHost(), 0, 1));
        clock.advance(Duration.ofSeconds(61));
        // a proposal, command or destination being written for this engine: PostgreSQL's foreign-key
        // check holds FOR KEY SHARE on the engine's row until that transaction ends
        try (KeyShareLock held = KeyShareLock.on(connections, "engine_incarnation", "incarnation_id", id)) {
            // both steps while the lock is held (the scheduled sweeper may take one of them: it
            // updates the row under the same lock, which proves the same)
            sweep();
            sweep();
            assertThat(engines.view(engine, id)).containsEntry("state", "LOST").containsEntry("fencingEpoch", 4);
        }
        assertThat(engines.transitions(id)).endsWith("READY>SUSPECT@3" + SWEEPER, "SUSPECT>LOST@4" + SWEEPER);
    }

    @Test
    void stateChangesArePublishedAfterCommit() {
        List<IncarnationStateChanged> seen = new CopyOnWriteArrayList<>();
        ApplicationListener<ApplicationEvent> listener = event -> {
            if (event instanceof PayloadApplicationEvent<?> p && p.getPayload() instanceof IncarnationStateChanged c) {
                seen.add(c);
            }
        };
        context.addApplicationListener(listener);
        try {
            UUID id = engines.ready(engine, registration(domain, newHost(), 0, 1));
            clock.advance(Duration.ofSeconds(11));
            sweep();
            assertThat(seen.stream().filter(c -> c.incarnationId().equals(id)).toList())
                    .containsExactly(
                            new IncarnationStateChanged(id, null, IncarnationState.REGISTERED, 1),
                            new IncarnationStateChanged(id, IncarnationState.REGISTERED, IncarnationState.READY, 2),
                            new IncarnationStateChanged(id, IncarnationState.READY, IncarnationState.SUSPECT, 3));
            assertThat(seen.stream()
                            .filter(c -> c.incarnationId().equals(id))
                            .filter(IncarnationStateChanged::leftReady))
                    .hasSize(1);
        } finally {
            context.removeApplicationListener(listener);
        }
    }

    /** One sweep that held the lock (the scheduled sweeper may hold it for a moment). */
    private LivenessSweeper.SweepResult sweep() {
        for (int attempt = 0; attempt < 100; attempt++) {
            LivenessSweeper.SweepResult r = sweeper.sweepOnce().block(Duration.ofSeconds(30));
            if (r.ran()) {
                return r;
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }
        throw new AssertionError("the sweeper lock was never free");
    }

    private static Mono<Void> lock(Connection conn, String function) {
        return Flux.from(conn.createStatement("SELECT " + function + "($1)")
                        .bind("$1", LivenessSweeper.LOCK_KEY)
                        .execute())
                .flatMap(r -> r.map((row, meta) -> row.get(0)))
                .then();
    }
}
