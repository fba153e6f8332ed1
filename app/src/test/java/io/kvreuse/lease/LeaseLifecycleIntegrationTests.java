package io.kvreuse.lease;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.support.IntegrationTest;
import io.kvreuse.support.LeaseWorld;
import io.kvreuse.support.MutableClock;
import io.kvreuse.support.TestTokens;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.test.web.reactive.server.WebTestClient;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

@IntegrationTest
class LeaseLifecycleIntegrationTests {

    @Autowired
    WebTestClient http;

    @Autowired
    TestTokens tokens;

    @Autowired
    MutableClock clock;

    @Autowired
    DatabaseClient db;

    LeaseWorld w;

    @BeforeEach
    void world() {
        w = new LeaseWorld(http, tokens, 2, 3_000, 6_000, 20_000);
    }

    @AfterEach
    void restore() {
        w.restore();
    }

    @Test
    void aLeaseWrittenAfterItsRouterWasAnsweredDeadlineIsWithdrawnAtOnce() {
        w.propose(); // the index knows the bank: the next selections plan a lease
        List<String> hashes = java.util.Arrays.stream(w.chain)
                .mapToObj(Long::toUnsignedString)
                .toList();
        String router = tokens.mint(io.kvreuse.security.Role.ROUTER);
        String request = "late-" + java.util.UUID.randomUUID();
        // the target's in-flight lock, held elsewhere: the proposal write starts, then waits past the deadline
        io.r2dbc.spi.Connection holder = holdTargetsInflightLock();
        try {
            Map<String, Object> answer = w.fleet.post(
                    "/api/v1/donor-selections",
                    router,
                    Map.of(
                            "requestId",
                            request,
                            "targetIncarnationId",
                            w.target.id(),
                            "seqHashes",
                            hashes,
                            "localPrefixBlocks",
                            0,
                            "deadlineMs",
                            300),
                    200);
            assertThat(answer).containsEntry("reason", "DEADLINE");
            assertThat(leases(request)).as("the write waits for the lock").isZero();
        } finally {
            run(holder, "SELECT pg_advisory_unlock_all()");
            Mono.from(holder.close()).block();
        }
        // the write runs to its end, and its lease is withdrawn by selection, long before its 3 s TTL
        List<String> transitions = List.of();
        for (int i = 0; i < 100 && !transitions.contains("PROPOSED>EXPIRED by system:selection"); i++) {
            LeaseWorld.sleep(20);
            transitions = db.sql("""
                            SELECT a.from_state || '>' || a.to_state || ' by ' || a.actor AS t
                            FROM audit_event a JOIN lease l ON a.subject_id = l.lease_id::text
                            WHERE l.request_id = :request AND a.from_state IS NOT NULL AND a.to_state IS NOT NULL
                            ORDER BY a.event_id
                            """)
                    .bind("request", request)
                    .map((r, m) -> r.get("t", String.class))
                    .all()
                    .collectList()
                    .block();
        }
        assertThat(transitions).containsExactly("PROPOSED>EXPIRED by system:selection");
    }

    @Autowired
    io.r2dbc.spi.ConnectionFactory connections;

    /** A connection of its own holding the target's in-flight lock until it is unlocked and closed. */
    private io.r2dbc.spi.Connection holdTargetsInflightLock() {
        io.r2dbc.spi.Connection holder = Mono.from(connections.create()).block();
        run(
                holder,
                "SELECT pg_advisory_lock(" + InflightCaps.LOCK_CLASS + ", "
                        + InflightCaps.key(java.util.UUID.fromString(w.target.id())) + ")");
        return holder;
    }

    private static void run(io.r2dbc.spi.Connection c, String sql) {
        Flux.from(c.createStatement(sql).execute())
                .flatMap(r -> r.map((row, meta) -> 1))
                .blockLast(java.time.Duration.ofSeconds(10));
    }

    long leases(String request) {
        return db.sql("SELECT count(*) AS n FROM lease WHERE request_id = :request")
                .bind("request", request)
                .map((r, m) -> ((Number) r.get("n")).longValue())
                .one()
                .block();
    }

    @Test
    void theLeasesOfManyConcurrentlyLateSelectionsAreAllWithdrawn() throws Exception {
        w.propose();
        List<String> hashes = java.util.Arrays.stream(w.chain)
                .mapToObj(Long::toUnsignedString)
                .toList();
        String router = tokens.mint(io.kvreuse.security.Role.ROUTER);
        List<String> late = new java.util.ArrayList<>();
        // the target's in-flight lock, held elsewhere while 48 selections arrive at once: the writes that
        // started wait for it past their deadline, the others are still queued at it and are not written
        io.r2dbc.spi.Connection holder = holdTargetsInflightLock();
        try {
            Map<String, java.util.concurrent.Future<Map<String, Object>>> answers = new java.util.LinkedHashMap<>();
            try (var pool = java.util.concurrent.Executors.newFixedThreadPool(16)) {
                for (int i = 0; i < 48; i++) {
                    String request = "late-many-" + java.util.UUID.randomUUID();
                    answers.put(
                            request,
                            pool.submit(() -> w.fleet.post(
                                    "/api/v1/donor-selections",
                                    router,
                                    Map.of(
                                            "requestId",
                                            request,
                                            "targetIncarnationId",
                                            w.target.id(),
                                            "seqHashes",
                                            hashes,
                                            "localPrefixBlocks",
                                            0,
                                            "deadlineMs",
                                            300),
                                    200)));
                }
            }
            for (var e : answers.entrySet()) {
                Map<String, Object> answer = e.getValue().get();
                assertThat(answer).as("no write can end while the lock is held").containsEntry("decision", "NO_HINT");
                if ("DEADLINE".equals(answer.get("reason"))) {
                    late.add(e.getKey());
                }
            }
            assertThat(late).as("selections answered at their deadline").isNotEmpty();
        } finally {
            run(holder, "SELECT pg_advisory_unlock_all()");
            Mono.from(holder.close()).block();
        }
        // the leases the started writes commit once the lock is free (the caps may refuse some): each
        // withdrawn by selection, long before the 3 s TTL, and none left PROPOSED
        Map<String, String> ends = Map.of();
        for (int i = 0; i < 100; i++) {
            ends = lateLeaseEnds(late);
            if (!ends.isEmpty() && !ends.containsValue("PROPOSED")) {
                break;
            }
            LeaseWorld.sleep(20);
        }
        assertThat(ends)
                .as("the writes that started before the deadlines commit late")
                .isNotEmpty();
        assertThat(ends.values())
                .as("late leases end EXPIRED by system:selection, none stays PROPOSED")
                .containsOnly("EXPIRED by system:selection");
    }

    /** Per lease written for one of {@code requests}: its state, or its last transition and actor. */
    private Map<String, String> lateLeaseEnds(List<String> requests) {
        return db.sql("""
                        SELECT l.lease_id::text AS id,
                               CASE WHEN l.state = 'PROPOSED' THEN 'PROPOSED' ELSE
                                 (SELECT a.to_state || ' by ' || a.actor FROM audit_event a
                                  WHERE a.subject_id = l.lease_id::text AND a.to_state IS NOT NULL
                                  ORDER BY a.event_id DESC LIMIT 1) END AS ended
                        FROM lease l WHERE l.request_id = ANY(:requests)
                        """)
                .bind("requests", requests.toArray(String[]::new))
                .map((r, m) -> Map.entry(r.get("id", String.class), r.get("ended", String.class)))
                .all()
                .collectMap(Map.Entry::getKey, Map.Entry::getValue)
                .block();
    }

    @Test
    void fullLifecycleDeliversCommitsAndReleasesEverythingOnce() {
        String lease = w.propose();
        assertThat(w.state(lease)).isEqualTo("PROPOSED");
        w.destination(lease, 0).expectStatus().isOk();
        w.pinAll(lease);
        assertThat(w.state(lease)).isEqualTo("SOURCE_PINNED");
        assertThat(pinned()).isEqualTo(2L * 8);

        List<Map<String, Object>> orders = w.orders(w.agentToken, w.host, 2000);
        assertThat(orders).hasSize(1);
        Map<String, Object> order = orders.getFirst();
        assertThat(order.get("leaseId")).isEqualTo(lease);
        assertThat((List<?>) order.get("remoteAgents")).isEmpty();
        assertThat(w.state(lease)).isEqualTo("TRANSFERRING");
        w.allParts(order, "DONE");
        assertThat(w.state(lease)).isEqualTo("DELIVERED");

        List<Map<String, Object>> notices = w.commands(w.target, 2000);
        assertThat(notices).anySatisfy(c -> {
            assertThat(c.get("type")).isEqualTo("DELIVERED");
            assertThat(c.get("leaseId")).isEqualTo(lease);
        });
        w.fleet.post(
                "/api/v1/leases/" + lease + "/commit",
                w.target.token(),
                Map.of("fencingEpoch", w.epoch(w.target), "committedBlocks", 8),
                200);
        assertThat(w.state(lease)).isEqualTo("RELEASING");

        long epoch = w.epoch(w.donor);
        List<Map<String, Object>> unpins = w.commands(w.donor, 2000);
        assertThat(unpins).filteredOn(c -> "UNPIN".equals(c.get("type"))).hasSize(2);
        for (Map<String, Object> c : unpins) {
            w.ack(w.donor, c.get("commandId"), true, epoch).expectStatus().isOk();
            // acknowledging again is idempotent and releases nothing twice
            w.ack(w.donor, c.get("commandId"), true, epoch)
                    .expectStatus()
                    .isOk()
                    .expectBody()
                    .jsonPath("$.duplicate")
                    .isEqualTo(true);
        }
        Map<String, Object> done = w.lease(lease);
        assertThat(done.get("state")).isEqualTo("RELEASED");
        assertThat(done.get("outcome")).isEqualTo("COMMITTED");
        assertThat(pinned()).isZero();
        assertThat(audited(lease))
                .containsSubsequence(
                        "PROPOSED>SOURCE_PINNED",
                        "SOURCE_PINNED>TRANSFERRING",
                        "TRANSFERRING>DELIVERED",
                        "DELIVERED>COMMITTED",
                        "COMMITTED>RELEASING",
                        "RELEASING>RELEASED");
    }

    @Test
    void blocksEvictedBetweenSelectionAndPinRefuseTheLease() {
        String lease = w.propose();
        // the donor evicts the first block before it sees the PIN
        w.fleet.post(
                "/api/v1/banks/" + w.bankId + "/events",
                w.donor.token(),
                Map.of(
                        "rank",
                        0,
                        "firstEventId",
                        2,
                        "events",
                        List.of(Map.of("type", "REMOVED", "seqHashes", List.of(Long.toUnsignedString(w.chain[7]))))),
                200);
        w.pinAll(lease);
        Map<String, Object> refused = w.lease(lease);
        assertThat(refused.get("outcome")).isEqualTo("REFUSED");
        assertThat(refused.get("state")).isIn("RELEASING", "RELEASED");
        // rank 1 may have been pinned first: its UNPIN releases it
        long epoch = w.epoch(w.donor);
        for (Map<String, Object> c : w.commands(w.donor, 0)) {
            w.ack(w.donor, c.get("commandId"), true, epoch).expectStatus().isOk();
        }
        assertThat(w.state(lease)).isEqualTo("RELEASED");
        assertThat(pinned()).isZero();
    }

    @Test
    void donorGoneBeforeUseExpiresAtTtlAndTheTargetsFetchIsRefused() {
        String lease = w.propose();
        w.fleet.post("/api/v1/incarnations/" + w.donor.id() + "/drain", w.donor.token(), Map.of(), 200);
        w.destination(lease, 0)
                .expectStatus()
                .isEqualTo(409)
                .expectBody()
                .jsonPath("$.type")
                .isEqualTo("https://kvreuse.io/problems/lease-fenced")
                .jsonPath("$.side")
                .isEqualTo("donor");
        clock.advance(java.time.Duration.ofMillis(3_500));
        sweep();
        assertThat(w.lease(lease)).containsEntry("state", "EXPIRED").containsEntry("outcome", "EXPIRED");
        assertThat(w.commands(w.donor, 0)).noneMatch(c -> lease.equals(c.get("leaseId")));
    }

    @Test
    void atItsTtlAnUntouchedProposalExpiresInOneStatementAndOnePinnedOnOneRankReleasesItsPin() {
        String untouched = w.propose();
        String pinned = w.propose();
        long inFlight = inFlight(w.target.id());
        long epoch = w.epoch(w.donor);
        Map<String, Object> pinOfRank0 = w.commands(w.donor, 2000).stream()
                .filter(c -> pinned.equals(c.get("leaseId")) && "PIN".equals(c.get("type")))
                .filter(c -> ((Number) c.get("rank")).intValue() == 0)
                .findFirst()
                .orElseThrow();
        w.ack(w.donor, pinOfRank0.get("commandId"), true, epoch).expectStatus().isOk();
        assertThat(w.state(pinned)).as("one rank of two pinned").isEqualTo("PROPOSED");
        clock.advance(java.time.Duration.ofMillis(3_500));
        w.fleet.heartbeat(w.donor);
        sweep();
        assertThat(w.lease(untouched)).containsEntry("state", "EXPIRED").containsEntry("outcome", "EXPIRED");
        assertThat(audited(untouched)).containsExactly("PROPOSED>EXPIRED");
        assertThat(w.state(pinned))
                .as("the decider releases what a rank pinned")
                .isEqualTo("RELEASING");
        assertThat(inFlight(w.target.id()))
                .as("the expired lease left its target's leases in flight")
                .isEqualTo(inFlight - 1);
        List<Map<String, Object>> open = w.commands(w.donor, 0);
        assertThat(open)
                .as("the untouched lease's PINs are withdrawn")
                .noneMatch(c -> untouched.equals(c.get("leaseId")));
        assertThat(open).anyMatch(c -> pinned.equals(c.get("leaseId")) && "UNPIN".equals(c.get("type")));
    }

    long inFlight(String party) {
        return db.sql("SELECT kvreuse_leases_in_flight(CAST(:p AS UUID), 'T') AS n")
                .bind("p", party)
                .map((r, m) -> ((Number) r.get("n")).longValue())
                .one()
                .block();
    }

    @Test
    void sourcePinnedButNeverTransferredIsReleasedAfterTheUnpin() {
        String lease = w.propose();
        w.pinAll(lease);
        assertThat(w.state(lease)).isEqualTo("SOURCE_PINNED");
        clock.advance(java.time.Duration.ofMillis(6_500));
        w.fleet.heartbeat(w.donor);
        sweep();
        assertThat(w.state(lease)).isEqualTo("RELEASING");
        assertThat(pinned()).isEqualTo(16L);
        long epoch = w.epoch(w.donor);
        for (Map<String, Object> c : w.commands(w.donor, 0)) {
            w.ack(w.donor, c.get("commandId"), true, epoch).expectStatus().isOk();
        }
        assertThat(w.state(lease)).isEqualTo("RELEASED");
        assertThat(pinned()).isZero();
    }

    @Test
    void timeoutWithLiveDonorStaysUncertainUntilQuiescedThenReleases() {
        String lease = transferring();
        clock.advance(java.time.Duration.ofMillis(6_500));
        w.fleet.heartbeat(w.donor);
        w.fleet.heartbeat(w.target);
        sweep();
        assertThat(w.state(lease)).isEqualTo("UNCERTAIN");
        // no timer releases it, however long
        clock.advance(java.time.Duration.ofMillis(3_000));
        w.fleet.heartbeat(w.donor);
        w.fleet.heartbeat(w.target);
        sweep();
        assertThat(w.state(lease)).isEqualTo("UNCERTAIN");
        assertThat(pinned()).isEqualTo(16L);
        // a late DONE cannot turn it into a success
        Map<String, Object> order = orderOf(lease);
        w.part(order.get("order_id"), 0, "DONE", ((Number) order.get("bytes")).longValue())
                .expectStatus()
                .isOk();
        assertThat(w.state(lease)).isEqualTo("UNCERTAIN");
        w.part(order.get("order_id"), 1, "QUIESCED", 0).expectStatus().isOk();
        Map<String, Object> failed = w.lease(lease);
        assertThat(failed.get("state")).isEqualTo("RELEASING");
        assertThat(failed.get("outcome")).isNotEqualTo("COMMITTED");
        w.fleet
                .postRaw(
                        "/api/v1/leases/" + lease + "/commit",
                        w.target.token(),
                        Map.of("fencingEpoch", w.epoch(w.target), "committedBlocks", 8))
                .expectStatus()
                .isEqualTo(409);
    }

    @Test
    void donorGoneMidTransferKeepsEverythingHeldAndTheDonorAwaitsReclaim() {
        String lease = transferring();
        clock.advance(java.time.Duration.ofSeconds(61));
        w.fleet.heartbeat(w.target);
        // one sweep makes the donor SUSPECT, the next LOST: never two states in one sweep. A sweep that
        // did not get the lock (the scheduled one had it), or whose batch was full of older incarnations
        // of the shared database, leaves the donor as it was: sweep until it is LOST, however many it takes
        List<String> donorMoves = new ArrayList<>();
        long deadline = System.nanoTime() + java.time.Duration.ofSeconds(60).toNanos();
        // (the scheduled lease sweep may take it on to RECLAIM_PENDING before this loop looks again)
        while (!List.of("LOST", "RECLAIM_PENDING").contains(donorState())) {
            assertThat(System.nanoTime())
                    .as("the donor LOST by liveness sweeps; it is " + donorState())
                    .isLessThan(deadline);
            var result = liveness.sweepOnce().block();
            List<String> moves = result.transitions().stream()
                    .filter(t -> t.incarnationId().toString().equals(w.donor.id()))
                    .map(t -> t.to().name())
                    .toList();
            assertThat(moves).as("the donor's moves in one sweep").hasSizeLessThanOrEqualTo(1);
            donorMoves.addAll(moves);
            if (!result.ran() || moves.isEmpty()) {
                LeaseWorld.sleep(50);
            }
        }
        assertThat(donorMoves).as("moves made by this test's sweeps").isSubsetOf("SUSPECT", "LOST");
        // the lease sweep that runs next finds the transfer's donor gone
        while (!"RECLAIM_PENDING".equals(donorState())) {
            assertThat(System.nanoTime())
                    .as("the donor RECLAIM_PENDING after a lease sweep; it is " + donorState())
                    .isLessThan(deadline);
            sweep();
        }
        assertThat(w.state(lease)).isEqualTo("UNCERTAIN");
        assertThat(donorState()).isEqualTo("RECLAIM_PENDING");
        assertThat(pinned()).isEqualTo(16L);
        assertThat(w.lease(lease).get("destinations"))
                .asList()
                .allSatisfy(d -> assertThat(((Map<?, ?>) d).get("state")).isEqualTo("HELD"));
        // the target recomputes elsewhere; its abort cannot release a transfer that may still write
        w.fleet.post(
                "/api/v1/leases/" + lease + "/abort",
                w.target.token(),
                Map.of("fencingEpoch", w.epoch(w.target), "reason", "recomputed"),
                200);
        assertThat(w.state(lease)).isEqualTo("UNCERTAIN");
        assertThat(pinned()).isEqualTo(16L);
    }

    @Autowired
    io.kvreuse.incarnation.LivenessSweeper liveness;

    private String donorState() {
        return (String) w.fleet
                .get("/api/v1/incarnations/" + w.donor.id(), tokens.operator())
                .get("state");
    }

    @Test
    void partialTransferFails() {
        String lease = transferring();
        Map<String, Object> order = orderOf(lease);
        long bytes = ((Number) order.get("bytes")).longValue();
        w.part(order.get("order_id"), 0, "DONE", bytes).expectStatus().isOk();
        assertThat(w.state(lease)).isEqualTo("TRANSFERRING");
        w.part(order.get("order_id"), 1, "DONE", bytes / 2).expectStatus().isOk();
        Map<String, Object> l = w.lease(lease);
        assertThat(l.get("outcome")).isEqualTo("PARTIAL");
        assertThat(l.get("state")).isEqualTo("RELEASING");
        // the target is asked to free its destination, the donor to unpin
        assertThat(w.commands(w.target, 0)).anyMatch(c -> "RELEASE".equals(c.get("type")));
    }

    @Test
    void staleEpochReportsAreRefusedAndChangeNothing() {
        String lease = w.propose();
        long old = w.epoch(w.donor);
        List<Map<String, Object>> pins = w.commands(w.donor, 2000);
        w.ack(w.donor, pins.getFirst().get("commandId"), true, old + 7)
                .expectStatus()
                .isEqualTo(409)
                .expectBody()
                .jsonPath("$.type")
                .isEqualTo("https://kvreuse.io/problems/stale-epoch")
                .jsonPath("$.currentEpoch")
                .isEqualTo((int) old);
        assertThat(w.state(lease)).isEqualTo("PROPOSED");
        w.fleet
                .postRaw(
                        "/api/v1/leases/" + lease + "/destination",
                        w.target.token(),
                        Map.of(
                                "fencingEpoch",
                                99,
                                "ranks",
                                List.of(
                                        Map.of("rank", 0, "regionRef", "shm://r", "slots", List.of(List.of(0, 8))),
                                        Map.of("rank", 1, "regionRef", "shm://r", "slots", List.of(List.of(0, 8))))))
                .expectStatus()
                .isEqualTo(409)
                .expectBody()
                .jsonPath("$.type")
                .isEqualTo("https://kvreuse.io/problems/stale-epoch");
        assertThat(w.lease(lease).get("destinations")).asList().isEmpty();
    }

    @Test
    void aDestinationIsNeverAllocatedTwice() {
        String first = w.propose();
        String second = w.propose();
        w.destination(first, 100).expectStatus().isOk();
        w.destination(second, 104)
                .expectStatus()
                .isEqualTo(409)
                .expectBody()
                .jsonPath("$.type")
                .isEqualTo("https://kvreuse.io/problems/destination-overlap");
        w.destination(second, 108).expectStatus().isOk();
        // the same report again is idempotent; a different one conflicts
        w.destination(first, 100).expectStatus().isOk();
        w.destination(first, 200).expectStatus().isEqualTo(409);
    }

    @Test
    void badDestinationsAreRejectedWithProblemDetails() {
        String lease = w.propose();
        w.fleet
                .postRaw(
                        "/api/v1/leases/" + lease + "/destination",
                        w.target.token(),
                        Map.of(
                                "fencingEpoch",
                                w.epoch(w.target),
                                "ranks",
                                List.of(Map.of("rank", 0, "regionRef", "shm://r", "slots", List.of(List.of(0, 3))))))
                .expectStatus()
                .isBadRequest()
                .expectHeader()
                .contentType("application/problem+json");
        w.fleet
                .postRaw(
                        "/api/v1/leases/" + lease + "/destination",
                        w.donor.token(),
                        Map.of(
                                "fencingEpoch",
                                1,
                                "ranks",
                                List.of(Map.of("rank", 0, "regionRef", "shm://r", "slots", List.of(List.of(0, 8))))))
                .expectStatus()
                .isForbidden();
        w.fleet
                .postRaw(
                        "/api/v1/leases/" + java.util.UUID.randomUUID() + "/commit",
                        w.target.token(),
                        Map.of("fencingEpoch", 1, "committedBlocks", 1))
                .expectStatus()
                .isNotFound()
                .expectBody()
                .jsonPath("$.type")
                .isEqualTo("https://kvreuse.io/problems/no-such-lease");
    }

    String transferring() {
        String lease = w.propose();
        w.destination(lease, 0).expectStatus().isOk();
        w.pinAll(lease);
        assertThat(w.orders(w.agentToken, w.host, 2000)).hasSize(1);
        assertThat(w.state(lease)).isEqualTo("TRANSFERRING");
        return lease;
    }

    Map<String, Object> orderOf(String lease) {
        return db.sql("SELECT o.order_id::text AS order_id, p.bytes FROM transfer_order o JOIN transfer_part p "
                        + "ON p.order_id = o.order_id WHERE o.lease_id = CAST(:l AS UUID) LIMIT 1")
                .bind("l", lease)
                .fetch()
                .one()
                .block();
    }

    long pinned() {
        return db.sql("SELECT COALESCE(sum(pin_count), 0) AS n FROM bank_block WHERE bank_id = CAST(:b AS UUID)")
                .bind("b", w.bankId)
                .map((r, m) -> ((Number) r.get("n")).longValue())
                .one()
                .block();
    }

    List<String> audited(String lease) {
        return db.sql(
                        "SELECT from_state || '>' || to_state AS t FROM audit_event WHERE subject_id = :l AND action = 'TRANSITION' ORDER BY event_id")
                .bind("l", lease)
                .map((r, m) -> r.get("t", String.class))
                .all()
                .collectList()
                .block();
    }

    @Autowired
    LeaseSweeper sweeper;

    void sweep() {
        for (int i = 0; i < 20; i++) {
            if (sweeper.sweepOnce().block().ran()) {
                return;
            }
            LeaseWorld.sleep(50);
        }
    }
}
