package io.kvreuse.lease;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.security.Role;
import io.kvreuse.support.IntegrationTest;
import io.kvreuse.support.LeaseWorld;
import io.kvreuse.support.TestTokens;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * The batch endpoints (selections, acknowledgements, destinations, part reports, commits): a batch
 * means exactly what its items sent one by one would have meant — the same states, holds, audit
 * chain and answers, each item's problem in its place — and concurrent batches never release
 * anything twice.
 */
@IntegrationTest
class LeaseBatchIntegrationTests {

    static final String PROBLEMS = "https://kvreuse.io/problems/";

    @Autowired
    WebTestClient http;

    @Autowired
    TestTokens tokens;

    @Autowired
    DatabaseClient db;

    LeaseWorld w;

    @BeforeEach
    void world() {
        w = new LeaseWorld(http, tokens, 2, 30_000, 60_000, 120_000);
    }

    @AfterEach
    void restore() {
        w.restore();
    }

    @Test
    void aBatchedLifecycleEndsLikeSingleReportsDo() {
        String single = w.propose();
        w.destination(single, 0).expectStatus().isOk();
        w.pinAll(single);
        Map<String, Object> order = w.orders(w.agentToken, w.host, 2000).getFirst();
        w.allParts(order, "DONE");
        w.fleet.post(
                "/api/v1/leases/" + single + "/commit",
                w.target.token(),
                Map.of("fencingEpoch", w.epoch(w.target), "committedBlocks", 8),
                200);
        ackAll(w.donor, Set.of(single), "UNPIN");
        assertThat(w.state(single)).isEqualTo("RELEASED");

        List<String> leases = selectBatch(5);
        Set<String> batch = new HashSet<>(leases);
        List<Map<String, Object>> results = destinations(leases, 100);
        assertThat(results).allSatisfy(r -> assertThat(result(r)).containsEntry("state", "PROPOSED"));
        List<Map<String, Object>> pins = ackAll(w.donor, batch, "PIN");
        assertThat(pins).hasSize(2 * leases.size());
        assertThat(pins).allSatisfy(r -> assertThat(result(r)).containsEntry("held", true));
        assertThat(leases).allSatisfy(l -> assertThat(w.state(l)).isEqualTo("SOURCE_PINNED"));
        assertThat(pinned()).isEqualTo(2L * 8 * leases.size());

        List<Map<String, Object>> orders = ordersOf(batch);
        assertThat(leases).allSatisfy(l -> assertThat(w.state(l)).isEqualTo("TRANSFERRING"));
        for (Map<String, Object> o : orders) {
            assertThat((List<?>) o.get("parts")).hasSize(w.tp).allSatisfy(p -> {
                for (String end : List.of("source", "destination")) {
                    Map<?, ?> e = (Map<?, ?>) ((Map<?, ?>) p).get(end);
                    assertThat(e.get("nixlAgent"))
                            .isEqualTo(io.kvreuse.protocol.NixlAgentNames.of(
                                    (String) e.get("hostId"), ((Number) e.get("gpuOrdinal")).intValue()));
                }
            });
        }
        List<Map<String, Object>> reports = doneReports(orders);
        List<Map<String, Object>> done = results(w.fleet.post(
                "/api/v1/agents/" + w.host + "/parts",
                w.agentToken,
                Map.of("fencingEpoch", w.agentEpoch, "reports", reports),
                200));
        assertThat(done)
                .hasSize(reports.size())
                .allSatisfy(r -> assertThat(result(r)).containsKey("leaseState"));
        assertThat(leases).allSatisfy(l -> assertThat(w.state(l)).isEqualTo("DELIVERED"));

        List<Map<String, Object>> notices = w.commands(w.target, 2000);
        assertThat(notices.stream()
                        .filter(c -> "DELIVERED".equals(c.get("type")))
                        .map(c -> c.get("leaseId"))
                        .toList())
                .containsAll(leases);
        List<Map<String, Object>> commits = new ArrayList<>();
        leases.forEach(l -> commits.add(Map.of("leaseId", l, "committedBlocks", 8)));
        assertThat(results(w.fleet.post(
                        "/api/v1/incarnations/" + w.target.id() + "/commits",
                        w.target.token(),
                        Map.of("fencingEpoch", w.epoch(w.target), "commits", commits),
                        200)))
                .allSatisfy(r -> assertThat(result(r)).containsEntry("state", "RELEASING"));
        // the committed destination is the target's own now; the DELIVERED notices are settled
        assertThat(w.commands(w.target, 0)).noneMatch(c -> batch.contains(c.get("leaseId")));

        List<Map<String, Object>> unpins = ackAll(w.donor, batch, "UNPIN");
        assertThat(unpins).hasSize(2 * leases.size());
        assertThat(pinned()).isZero();
        for (String l : leases) {
            Map<String, Object> lease = w.lease(l);
            assertThat(lease).containsEntry("state", "RELEASED").containsEntry("outcome", "COMMITTED");
            assertThat(audit(l)).isEqualTo(audit(single));
        }
        assertThat(heldSlotRuns()).isZero();
    }

    @Test
    void eachItemIsAnsweredAsIfSentAloneAndAProblemStopsNothingElse() {
        List<String> leases = selectBatch(3);
        long epoch = w.epoch(w.donor);
        List<Map<String, Object>> open = commandsFor(w.donor, new HashSet<>(leases), "PIN", 2 * leases.size());
        Object firstOfA = open.stream()
                .filter(c -> leases.get(0).equals(c.get("leaseId")))
                .findFirst()
                .orElseThrow()
                .get("commandId");
        w.ack(w.donor, firstOfA, true, epoch).expectStatus().isOk();

        List<Map<String, Object>> acks = new ArrayList<>();
        UUID unknown = UUID.randomUUID();
        acks.add(Map.of("commandId", unknown.toString(), "ok", true));
        acks.add(Map.of("commandId", firstOfA, "ok", true)); // already acknowledged
        for (Map<String, Object> c : open) {
            if (c.get("commandId").equals(firstOfA)) {
                continue;
            }
            // the donor refuses lease B's pins and holds the others
            boolean ok = !leases.get(1).equals(c.get("leaseId"));
            acks.add(Map.of("commandId", c.get("commandId"), "ok", ok, "detail", "test"));
        }
        List<Map<String, Object>> results = results(w.fleet.post(
                "/api/v1/incarnations/" + w.donor.id() + "/commands/acks",
                w.donor.token(),
                Map.of("fencingEpoch", epoch, "acks", acks),
                200));
        assertThat(results).hasSize(acks.size());
        assertThat(problem(results.get(0)))
                .containsEntry("type", PROBLEMS + "no-such-command")
                .containsEntry("status", 404);
        assertThat(result(results.get(1))).containsEntry("duplicate", true).containsEntry("held", true);
        assertThat(w.state(leases.get(0))).isEqualTo("SOURCE_PINNED");
        assertThat(w.lease(leases.get(1))).containsEntry("outcome", "REFUSED");
        assertThat(w.state(leases.get(2))).isEqualTo("SOURCE_PINNED");
    }

    @Test
    void aStaleEpochRefusesTheWholeBatchAndChangesNothing() {
        List<String> leases = selectBatch(2);
        List<Map<String, Object>> open = commandsFor(w.donor, new HashSet<>(leases), "PIN", 4);
        List<Map<String, Object>> acks = new ArrayList<>();
        open.forEach(c -> acks.add(Map.of("commandId", c.get("commandId"), "ok", true)));
        w.fleet
                .postRaw(
                        "/api/v1/incarnations/" + w.donor.id() + "/commands/acks",
                        w.donor.token(),
                        Map.of("fencingEpoch", w.epoch(w.donor) + 7, "acks", acks))
                .expectStatus()
                .isEqualTo(409)
                .expectBody()
                .jsonPath("$.type")
                .isEqualTo(PROBLEMS + "stale-epoch");
        assertThat(leases).allSatisfy(l -> assertThat(w.state(l)).isEqualTo("PROPOSED"));
        assertThat(pinned()).isZero();
        long stillOpen = db.sql("SELECT count(*) AS n FROM engine_command WHERE type = 'PIN' AND acked_at IS NULL"
                        + " AND lease_id = ANY(CAST(:l AS UUID[]))")
                .bind("l", leases.toArray(String[]::new))
                .map((r, m) -> ((Number) r.get("n")).longValue())
                .one()
                .block();
        assertThat(stillOpen).isEqualTo(4);
    }

    @Test
    void anOverlappingDestinationIsRefusedAloneWhileTheOthersAreAllocated() {
        List<String> leases = selectBatch(3);
        List<Map<String, Object>> items = new ArrayList<>();
        items.add(destination(leases.get(0), 200));
        items.add(destination(leases.get(1), 204)); // overlaps the first on every rank
        items.add(destination(leases.get(2), 300));
        List<Map<String, Object>> results = results(w.fleet.post(
                "/api/v1/incarnations/" + w.target.id() + "/destinations",
                w.target.token(),
                Map.of("fencingEpoch", w.epoch(w.target), "destinations", items),
                200));
        assertThat(result(results.get(0))).containsEntry("state", "PROPOSED");
        assertThat(problem(results.get(1)))
                .containsEntry("type", PROBLEMS + "destination-overlap")
                .containsEntry("status", 409);
        assertThat(result(results.get(2))).containsEntry("state", "PROPOSED");
        assertThat((List<?>) w.lease(leases.get(0)).get("destinations")).hasSize(2);
        assertThat((List<?>) w.lease(leases.get(1)).get("destinations")).isEmpty();
        assertThat((List<?>) w.lease(leases.get(2)).get("destinations")).hasSize(2);
    }

    @Test
    void commitsAreCheckedItemByItem() {
        List<String> leases = selectBatch(2);
        destinations(leases, 400);
        ackAll(w.donor, new HashSet<>(leases), "PIN");
        List<Map<String, Object>> commits = List.of(
                Map.of("leaseId", leases.get(0), "committedBlocks", 9), // more than was fetched
                Map.of("leaseId", leases.get(1), "committedBlocks", 8), // not delivered yet
                Map.of("leaseId", UUID.randomUUID().toString(), "committedBlocks", 8));
        List<Map<String, Object>> results = results(w.fleet.post(
                "/api/v1/incarnations/" + w.target.id() + "/commits",
                w.target.token(),
                Map.of("fencingEpoch", w.epoch(w.target), "commits", commits),
                200));
        assertThat(problem(results.get(0))).containsEntry("status", 400);
        assertThat(problem(results.get(1)))
                .containsEntry("type", PROBLEMS + "lease-state-conflict")
                .containsEntry("status", 409);
        assertThat(problem(results.get(2))).containsEntry("type", PROBLEMS + "no-such-lease");
        assertThat(leases).allSatisfy(l -> assertThat(w.state(l)).isEqualTo("SOURCE_PINNED"));
    }

    @Test
    void aTargetBatchReportsOnlyOnItsOwnIncarnationsLeases() {
        List<String> leases = selectBatch(1);
        // the donor's own token, at the donor's epoch, sends the target's report to the donor's address
        List<Map<String, Object>> results = results(w.fleet.post(
                "/api/v1/incarnations/" + w.donor.id() + "/destinations",
                w.donor.token(),
                Map.of("fencingEpoch", w.epoch(w.donor), "destinations", List.of(destination(leases.getFirst(), 700))),
                200));
        assertThat(problem(results.getFirst())).containsEntry("type", PROBLEMS + "no-such-lease");
        assertThat((List<?>) w.lease(leases.getFirst()).get("destinations")).isEmpty();
    }

    @Test
    void aFailedPartInABatchFailsOnlyItsLease() {
        List<String> leases = selectBatch(2);
        destinations(leases, 500);
        ackAll(w.donor, new HashSet<>(leases), "PIN");
        List<Map<String, Object>> orders = ordersOf(new HashSet<>(leases));
        List<Map<String, Object>> reports = new ArrayList<>();
        for (Map<String, Object> o : orders) {
            boolean fail = leases.get(0).equals(o.get("leaseId"));
            for (Object p : (List<?>) o.get("parts")) {
                Map<?, ?> part = (Map<?, ?>) p;
                boolean failThis = fail && ((Number) part.get("rank")).intValue() == 1;
                reports.add(Map.of(
                        "orderId",
                        o.get("orderId"),
                        "rank",
                        part.get("rank"),
                        "state",
                        failThis ? "FAILED" : "DONE",
                        "bytes",
                        failThis ? 0 : part.get("bytes"),
                        "durationUs",
                        900));
            }
        }
        List<Map<String, Object>> results = results(w.fleet.post(
                "/api/v1/agents/" + w.host + "/parts",
                w.agentToken,
                Map.of("fencingEpoch", w.agentEpoch, "reports", reports),
                200));
        assertThat(results).allSatisfy(r -> assertThat(r).containsKey("result"));
        Map<String, Object> failed = w.lease(leases.get(0));
        assertThat(failed.get("outcome")).isEqualTo("PARTIAL");
        assertThat(failed.get("state")).isIn("RELEASING", "RELEASED");
        assertThat(w.state(leases.get(1))).isEqualTo("DELIVERED");
    }

    @Test
    void concurrentBatchesReleaseEachPinExactlyOnce() throws Exception {
        List<String> leases = selectBatch(6);
        Set<String> batch = new HashSet<>(leases);
        destinations(leases, 600);
        ackAll(w.donor, batch, "PIN");
        List<Map<String, Object>> orders = ordersOf(batch);
        List<Map<String, Object>> reports = doneReports(orders);
        long targetEpoch = w.epoch(w.target);
        List<Map<String, Object>> commits = new ArrayList<>();
        leases.forEach(l -> commits.add(Map.of("leaseId", l, "committedBlocks", 8)));
        // the agent's report and the target's commit race twice each
        race(
                () -> w.fleet.post(
                        "/api/v1/agents/" + w.host + "/parts",
                        w.agentToken,
                        Map.of("fencingEpoch", w.agentEpoch, "reports", reports),
                        200),
                () -> w.fleet.post(
                        "/api/v1/agents/" + w.host + "/parts",
                        w.agentToken,
                        Map.of("fencingEpoch", w.agentEpoch, "reports", reports),
                        200));
        race(
                () -> w.fleet.post(
                        "/api/v1/incarnations/" + w.target.id() + "/commits",
                        w.target.token(),
                        Map.of("fencingEpoch", targetEpoch, "commits", commits),
                        200),
                () -> w.fleet.post(
                        "/api/v1/incarnations/" + w.target.id() + "/commits",
                        w.target.token(),
                        Map.of("fencingEpoch", targetEpoch, "commits", commits),
                        200));
        List<Map<String, Object>> unpins = commandsFor(w.donor, batch, "UNPIN", 2 * leases.size());
        List<Map<String, Object>> acks = new ArrayList<>();
        unpins.forEach(c -> acks.add(Map.of("commandId", c.get("commandId"), "ok", true)));
        long donorEpoch = w.epoch(w.donor);
        Callable<Object> unpin = () -> w.fleet.post(
                "/api/v1/incarnations/" + w.donor.id() + "/commands/acks",
                w.donor.token(),
                Map.of("fencingEpoch", donorEpoch, "acks", acks),
                200);
        race(unpin, unpin, unpin);
        assertThat(pinned()).isZero();
        for (String l : leases) {
            assertThat(w.lease(l)).containsEntry("state", "RELEASED").containsEntry("outcome", "COMMITTED");
            List<String> chain = audit(l);
            assertThat(chain).doesNotHaveDuplicates();
            assertThat(chain).endsWith("RELEASING>RELEASED@6");
        }
    }

    @Test
    void singleReportsRacingOnOneLeaseMakeEachTransitionOnce() throws Exception {
        List<String> leases = selectBatch(3);
        Set<String> batch = new HashSet<>(leases);
        destinations(leases, 700);
        ackAll(w.donor, batch, "PIN");
        // each report reaches the control plane twice at the same moment, as through two replicas
        for (Map<String, Object> r : doneReports(ordersOf(batch))) {
            String path = "/api/v1/orders/" + r.get("orderId") + "/parts/" + r.get("rank");
            Map<String, Object> body =
                    Map.of("state", "DONE", "bytes", r.get("bytes"), "durationUs", 900, "fencingEpoch", w.agentEpoch);
            race(() -> single(path, w.agentToken, body), () -> single(path, w.agentToken, body));
        }
        Map<String, Object> commit = Map.of("fencingEpoch", w.epoch(w.target), "committedBlocks", 8);
        for (String l : leases) {
            String path = "/api/v1/leases/" + l + "/commit";
            race(() -> single(path, w.target.token(), commit), () -> single(path, w.target.token(), commit));
        }
        Map<String, Object> ack = Map.of("ok", true, "fencingEpoch", w.epoch(w.donor));
        for (Map<String, Object> c : commandsFor(w.donor, batch, "UNPIN", w.tp * leases.size())) {
            String path = "/api/v1/incarnations/" + w.donor.id() + "/commands/" + c.get("commandId") + "/ack";
            race(() -> single(path, w.donor.token(), ack), () -> single(path, w.donor.token(), ack));
        }
        assertThat(pinned()).isZero();
        for (String l : leases) {
            assertThat(w.lease(l)).containsEntry("state", "RELEASED").containsEntry("outcome", "COMMITTED");
            assertThat(audit(l)).doesNotHaveDuplicates().endsWith("RELEASING>RELEASED@6");
        }
    }

    /** A raced single report: the winner answers 200, the other the same answer again or 409, never a 5xx. */
    int single(String path, String token, Object body) {
        int[] status = new int[1];
        w.fleet.postRaw(path, token, body).expectStatus().value(s -> status[0] = s);
        assertThat(status[0]).as(path).isIn(200, 409);
        return status[0];
    }

    @Test
    void aMalformedSelectionRefusesTheWholeBatchBeforeAnythingIsWritten() {
        String router = tokens.mint(Role.ROUTER);
        String request = "bad-batch-" + UUID.randomUUID();
        List<Map<String, Object>> selections = new ArrayList<>();
        selections.add(selection(request + "-ok", hashes()));
        selections.add(selection(request + "-bad", List.of("not-a-hash")));
        w.fleet
                .postRaw("/api/v1/donor-selections/batch", router, Map.of("selections", selections))
                .expectStatus()
                .isBadRequest();
        long written = db.sql("SELECT count(*) AS n FROM lease WHERE request_id LIKE :r")
                .bind("r", request + "%")
                .map((r, m) -> ((Number) r.get("n")).longValue())
                .one()
                .block();
        assertThat(written).isZero();
        w.fleet
                .postRaw("/api/v1/donor-selections/batch", router, Map.of("selections", List.of()))
                .expectStatus()
                .isBadRequest();
        w.fleet
                .postRaw(
                        "/api/v1/incarnations/" + w.donor.id() + "/commands/acks",
                        w.donor.token(),
                        Map.of("fencingEpoch", 1, "acks", List.of(Map.of("commandId", "nope", "ok", true))))
                .expectStatus()
                .isBadRequest();
    }

    // ---- helpers ----

    /** A DONE report of every part of the orders, with the part's full byte count. */
    static List<Map<String, Object>> doneReports(List<Map<String, Object>> orders) {
        List<Map<String, Object>> reports = new ArrayList<>();
        for (Map<String, Object> o : orders) {
            for (Object p : (List<?>) o.get("parts")) {
                Map<?, ?> part = (Map<?, ?>) p;
                reports.add(Map.of(
                        "orderId", o.get("orderId"),
                        "rank", part.get("rank"),
                        "state", "DONE",
                        "bytes", part.get("bytes"),
                        "durationUs", 900));
            }
        }
        return reports;
    }

    List<String> hashes() {
        return java.util.Arrays.stream(w.chain).mapToObj(Long::toUnsignedString).toList();
    }

    Map<String, Object> selection(String requestId, List<String> hashes) {
        return Map.of(
                "requestId",
                requestId,
                "targetIncarnationId",
                w.target.id(),
                "seqHashes",
                hashes,
                "localPrefixBlocks",
                0,
                "deadlineMs",
                2000);
    }

    /** {@code n} HINTs from batch selections (the first selections may wait for the index to know the bank). */
    List<String> selectBatch(int n) {
        w.propose();
        String router = tokens.mint(Role.ROUTER);
        List<Map<String, Object>> selections = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            selections.add(selection("batch-" + UUID.randomUUID(), hashes()));
        }
        List<String> leases = new ArrayList<>();
        for (Object r : (List<?>) w.fleet
                .post("/api/v1/donor-selections/batch", router, Map.of("selections", selections), 200)
                .get("results")) {
            Map<?, ?> answer = (Map<?, ?>) r;
            assertThat(answer.get("decision")).isEqualTo("HINT");
            leases.add((String) answer.get("leaseId"));
        }
        return leases;
    }

    Map<String, Object> destination(String lease, int start) {
        List<Map<String, Object>> ranks = new ArrayList<>();
        for (int r = 0; r < w.tp; r++) {
            ranks.add(Map.of("rank", r, "regionRef", w.destinationRegion(r), "slots", List.of(List.of(start, 8))));
        }
        return Map.of("leaseId", lease, "ranks", ranks);
    }

    List<Map<String, Object>> destinations(List<String> leases, int firstSlot) {
        List<Map<String, Object>> items = new ArrayList<>();
        for (int i = 0; i < leases.size(); i++) {
            items.add(destination(leases.get(i), firstSlot + 8 * i));
        }
        return results(w.fleet.post(
                "/api/v1/incarnations/" + w.target.id() + "/destinations",
                w.target.token(),
                Map.of("fencingEpoch", w.epoch(w.target), "destinations", items),
                200));
    }

    List<Map<String, Object>> commandsFor(
            io.kvreuse.support.Fleet.Engine e, Set<String> leases, String type, int count) {
        Map<Object, Map<String, Object>> found = new LinkedHashMap<>();
        for (int i = 0; i < 20 && found.size() < count; i++) {
            for (Map<String, Object> c : w.commands(e, 1000)) {
                if (type.equals(c.get("type")) && leases.contains(c.get("leaseId"))) {
                    found.putIfAbsent(c.get("commandId"), c);
                }
            }
        }
        assertThat(found).hasSize(count);
        return List.copyOf(found.values());
    }

    List<Map<String, Object>> ackAll(io.kvreuse.support.Fleet.Engine e, Set<String> leases, String type) {
        List<Map<String, Object>> open = commandsFor(e, leases, type, w.tp * leases.size());
        List<Map<String, Object>> acks = new ArrayList<>();
        open.forEach(c -> acks.add(Map.of("commandId", c.get("commandId"), "ok", true)));
        List<Map<String, Object>> results = results(w.fleet.post(
                "/api/v1/incarnations/" + e.id() + "/commands/acks",
                e.token(),
                Map.of("fencingEpoch", w.epoch(e), "acks", acks),
                200));
        assertThat(results).allSatisfy(r -> assertThat(r).containsKey("result"));
        return results;
    }

    List<Map<String, Object>> ordersOf(Set<String> leases) {
        Map<Object, Map<String, Object>> found = new LinkedHashMap<>();
        for (int i = 0; i < 20 && found.size() < leases.size(); i++) {
            for (Map<String, Object> o : w.orders(w.agentToken, w.host, 1000)) {
                if (leases.contains(o.get("leaseId"))) {
                    found.putIfAbsent(o.get("orderId"), o);
                }
            }
        }
        assertThat(found).hasSize(leases.size());
        return List.copyOf(found.values());
    }

    @SuppressWarnings("unchecked")
    static List<Map<String, Object>> results(Map<String, Object> answer) {
        return (List<Map<String, Object>>) answer.get("results");
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> result(Map<String, Object> item) {
        assertThat(item).containsKey("result").doesNotContainKey("problem");
        return (Map<String, Object>) item.get("result");
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> problem(Map<String, Object> item) {
        assertThat(item).containsKey("problem").doesNotContainKey("result");
        return (Map<String, Object>) item.get("problem");
    }

    static void race(Callable<?>... calls) throws Exception {
        try (var pool = Executors.newFixedThreadPool(calls.length)) {
            List<Future<?>> futures = new ArrayList<>();
            for (Callable<?> c : calls) {
                futures.add(pool.submit(c));
            }
            for (Future<?> f : futures) {
                f.get();
            }
        }
    }

    long pinned() {
        return db.sql("SELECT COALESCE(sum(pin_count), 0) AS n FROM bank_block WHERE bank_id = CAST(:b AS UUID)")
                .bind("b", w.bankId)
                .map((r, m) -> ((Number) r.get("n")).longValue())
                .one()
                .block();
    }

    long heldSlotRuns() {
        return db.sql("SELECT count(*) AS n FROM destination_slot_run WHERE incarnation_id = CAST(:t AS UUID) AND held")
                .bind("t", w.target.id())
                .map((r, m) -> ((Number) r.get("n")).longValue())
                .one()
                .block();
    }

    /** The lease's audit chain: transitions with their version and outcome, and actions. */
    List<String> audit(String lease) {
        return db.sql("""
                        SELECT CASE WHEN action = 'TRANSITION'
                                    THEN from_state || '>' || to_state || COALESCE(' ' || (detail ->> 'outcome'), '') || '@' || epoch
                                    ELSE action || ' ' || detail::text END AS t
                        FROM audit_event WHERE subject_id = :l ORDER BY event_id
                        """)
                .bind("l", lease)
                .map((r, m) -> r.get("t", String.class))
                .all()
                .collectList()
                .block();
    }
}
