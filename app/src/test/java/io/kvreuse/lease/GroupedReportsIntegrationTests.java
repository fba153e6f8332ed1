package io.kvreuse.lease;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.support.Fleet;
import io.kvreuse.support.IntegrationTest;
import io.kvreuse.support.LeaseWorld;
import io.kvreuse.support.TestTokens;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * Single reports sent concurrently are decided together (group commit) and must mean exactly what
 * they mean sent one after the other: the same answers, states, holds and audit chains; a report
 * of a group that is refused or overlaps fails alone; and a report is answered with the lease as
 * the transaction stored it.
 */
@IntegrationTest
class GroupedReportsIntegrationTests {

    static final String PROBLEMS = "https://kvreuse.io/problems/";
    static final int LEASES = 6;
    private static final ParameterizedTypeReference<Map<String, Object>> JSON = new ParameterizedTypeReference<>() {};

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
    void concurrentSingleReportsEndLikeTheSameReportsSentOneAfterTheOther() throws Exception {
        String alone = w.propose();
        List<String> sequential = lifecycle(List.of(alone), 1).get(alone);
        // one rank after the other: the first PIN leaves the lease PROPOSED, the second pins it
        assertThat(sequential)
                .containsExactlyInAnyOrder(
                        "destination PROPOSED",
                        "PIN PROPOSED",
                        "PIN SOURCE_PINNED",
                        "part DELIVERED",
                        "part TRANSFERRING",
                        "commit RELEASING",
                        "UNPIN RELEASED",
                        "UNPIN RELEASING");
        List<String> leases = new ArrayList<>();
        for (int i = 0; i < LEASES; i++) {
            leases.add(w.propose());
        }
        Map<String, List<String>> concurrent = lifecycle(leases, LEASES);
        for (String l : leases) {
            assertThat(concurrent.get(l)).as("answers of " + l).isEqualTo(sequential);
            assertThat(w.lease(l)).containsEntry("state", "RELEASED").containsEntry("outcome", "COMMITTED");
            assertThat(audit(l)).isEqualTo(audit(alone)).isNotEmpty();
        }
        assertThat(pinned()).isZero();
        assertThat(heldSlotRuns()).isZero();
    }

    /**
     * Every step of the leases' lifecycle, each report its own request, all of a step at once.
     * Answers per lease the lease state each report answered, with its step, sorted.
     */
    private Map<String, List<String>> lifecycle(List<String> leases, int threads) throws Exception {
        Set<String> set = new HashSet<>(leases);
        Map<String, List<String>> answered = new TreeMap<>();
        leases.forEach(l -> answered.put(l, new ArrayList<>()));
        long targetEpoch = w.epoch(w.target);
        List<Callable<EntityExchangeResult<Map<String, Object>>>> destinations = new ArrayList<>();
        for (int i = 0; i < leases.size(); i++) {
            destinations.add(destination(leases.get(i), 100 + 8 * i, targetEpoch));
        }
        for (EntityExchangeResult<Map<String, Object>> r : race(threads, destinations)) {
            assertThat(r.getStatus().value()).isEqualTo(200);
            assertAsStored(r.getResponseBody(), "PROPOSED");
            assertThat((List<?>) r.getResponseBody().get("destinations")).hasSize(w.tp);
            assertThat((List<?>) r.getResponseBody().get("pins")).isEmpty();
            answered.get((String) r.getResponseBody().get("leaseId")).add("destination PROPOSED");
        }
        // both ranks' PINs of a lease are acknowledged at the same time
        List<EntityExchangeResult<Map<String, Object>>> pins = race(threads, acks(set, "PIN"));
        assertThat(pins).allSatisfy(r -> assertThat(r.getResponseBody()).containsEntry("held", true));
        pins.forEach(r -> answer(answered, r.getResponseBody(), "PIN"));
        assertThat(leases).allSatisfy(l -> assertThat(w.state(l)).isEqualTo("SOURCE_PINNED"));
        List<Callable<EntityExchangeResult<Map<String, Object>>>> parts = new ArrayList<>();
        Map<Object, String> leaseOfOrder = new LinkedHashMap<>();
        for (Map<String, Object> o : ordersOf(set)) {
            leaseOfOrder.put(o.get("orderId"), (String) o.get("leaseId"));
            for (Object p : (List<?>) o.get("parts")) {
                Map<?, ?> part = (Map<?, ?>) p;
                parts.add(() -> exchange(w.part(
                        o.get("orderId"),
                        ((Number) part.get("rank")).intValue(),
                        "DONE",
                        ((Number) part.get("bytes")).longValue())));
            }
        }
        for (EntityExchangeResult<Map<String, Object>> r : race(threads, parts)) {
            assertThat(r.getStatus().value()).isEqualTo(200);
            assertThat(r.getResponseBody()).containsEntry("state", "DONE");
            answered.get(leaseOfOrder.get(r.getResponseBody().get("orderId")))
                    .add("part " + r.getResponseBody().get("leaseState"));
        }
        assertThat(leases).allSatisfy(l -> assertThat(w.state(l)).isEqualTo("DELIVERED"));
        List<Callable<EntityExchangeResult<Map<String, Object>>>> commits = new ArrayList<>();
        leases.forEach(l -> commits.add(() -> exchange(w.fleet.postRaw(
                "/api/v1/leases/" + l + "/commit",
                w.target.token(),
                Map.of("fencingEpoch", targetEpoch, "committedBlocks", 8)))));
        for (EntityExchangeResult<Map<String, Object>> r : race(threads, commits)) {
            assertThat(r.getStatus().value()).isEqualTo(200);
            assertAsStored(r.getResponseBody(), "RELEASING");
            assertThat(r.getResponseBody()).containsEntry("committedBlocks", 8).containsEntry("outcome", "COMMITTED");
            answered.get((String) r.getResponseBody().get("leaseId")).add("commit RELEASING");
        }
        race(threads, acks(set, "UNPIN")).forEach(r -> answer(answered, r.getResponseBody(), "UNPIN"));
        answered.values().forEach(Collections::sort);
        return answered;
    }

    private static void answer(Map<String, List<String>> answered, Map<String, Object> ack, String type) {
        assertThat(ack).containsEntry("type", type).containsEntry("duplicate", false);
        answered.get((String) ack.get("leaseId")).add(type + " " + ack.get("leaseState"));
    }

    @Test
    void aReportThatIsRefusedOrOverlapsFailsAloneWhileItsNeighboursSucceed() throws Exception {
        List<String> leases = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            leases.add(w.propose());
        }
        long epoch = w.epoch(w.target);
        List<EntityExchangeResult<Map<String, Object>>> answers = race(
                5,
                List.of(
                        destination(leases.get(0), 1000, epoch),
                        destination(leases.get(1), 1004, epoch), // overlaps lease 0 on every rank
                        destination(leases.get(2), 1100, epoch + 5), // a stale epoch
                        destination(leases.get(3), 1200, epoch),
                        destination(leases.get(4), 1300, epoch)));
        List<Integer> statuses =
                answers.stream().map(r -> r.getStatus().value()).toList();
        // one of the overlapping pair is allocated, whichever came first; the other answers 409
        assertThat(List.of(statuses.get(0), statuses.get(1))).containsExactlyInAnyOrder(200, 409);
        EntityExchangeResult<Map<String, Object>> overlap = statuses.get(0) == 409 ? answers.get(0) : answers.get(1);
        assertThat(overlap.getResponseBody()).containsEntry("type", PROBLEMS + "destination-overlap");
        assertThat(answers.get(2).getStatus().value()).isEqualTo(409);
        assertThat(answers.get(2).getResponseBody()).containsEntry("type", PROBLEMS + "stale-epoch");
        for (int i : List.of(3, 4)) {
            assertThat(answers.get(i).getStatus().value()).isEqualTo(200);
            assertAsStored(answers.get(i).getResponseBody(), "PROPOSED");
        }
        String lost = statuses.get(0) == 409 ? leases.get(0) : leases.get(1);
        assertThat((List<?>) w.lease(lost).get("destinations")).isEmpty();
        assertThat((List<?>) w.lease(leases.get(2)).get("destinations")).isEmpty();
        assertThat(audit(leases.get(2))).noneMatch(a -> a.startsWith("DESTINATION_ALLOCATED"));

        // the donor refuses lease 3's pins while it holds lease 4's, at the same time
        long donorEpoch = w.epoch(w.donor);
        List<Callable<EntityExchangeResult<Map<String, Object>>>> acks = new ArrayList<>();
        for (Map<String, Object> c : commandsFor(w.donor, Set.of(leases.get(3), leases.get(4)), "PIN", 4)) {
            boolean ok = leases.get(4).equals(c.get("leaseId"));
            acks.add(() -> exchange(w.ack(w.donor, c.get("commandId"), ok, donorEpoch)));
        }
        assertThat(race(4, acks))
                .allSatisfy(r -> assertThat(r.getStatus().value()).isEqualTo(200));
        assertThat(w.lease(leases.get(3))).containsEntry("outcome", "REFUSED");
        assertThat(w.lease(leases.get(4))).containsEntry("state", "SOURCE_PINNED");
    }

    @Test
    void abortAndQuiescenceAreAnsweredWithTheLeaseAsStored() throws Exception {
        String aborted = w.propose();
        w.destination(aborted, 2000).expectStatus().isOk();
        Map<String, Object> abort = exchange(w.fleet.postRaw(
                        "/api/v1/leases/" + aborted + "/abort",
                        w.target.token(),
                        Map.of("fencingEpoch", w.epoch(w.target), "reason", "gave up")))
                .getResponseBody();
        assertAsStored(abort, "RELEASING");
        assertThat(abort).containsEntry("outcome", "ABORTED");
        Map<String, Object> row = db.sql(
                        "SELECT version, CAST(EXTRACT(EPOCH FROM state_changed_at) * 1000000 AS BIGINT)"
                                + " AS at FROM lease WHERE lease_id = CAST(:l AS UUID)")
                .bind("l", aborted)
                .fetch()
                .one()
                .block();
        Instant at = Instant.parse((String) abort.get("stateChangedAt"));
        assertThat(((Number) row.get("version")).longValue()).isEqualTo(((Number) abort.get("version")).longValue());
        assertThat(((Number) row.get("at")).longValue())
                .isEqualTo(at.getEpochSecond() * 1_000_000 + at.getNano() / 1000);

        String moving = w.propose();
        w.destination(moving, 2100).expectStatus().isOk();
        w.pinAll(moving);
        ordersOf(Set.of(moving));
        assertThat(w.state(moving)).isEqualTo("TRANSFERRING");
        Map<String, Object> quiesced = exchange(w.fleet.postRaw(
                        "/api/v1/leases/" + moving + "/quiesced",
                        tokens.operator(),
                        Map.of("side", "SOURCE", "evidence", "the NIXL request was released")))
                .getResponseBody();
        assertAsStored(quiesced, "TRANSFERRING");
        assertThat(quiesced).containsEntry("sourceQuiesced", true).containsEntry("destinationQuiesced", false);
    }

    /** The answer is the lease as a later read shows it, in {@code state}, every field and timestamp alike. */
    private void assertAsStored(Map<String, Object> answer, String state) {
        assertThat(answer).containsEntry("state", state);
        assertThat(answer).isEqualTo(w.lease((String) answer.get("leaseId")));
    }

    private Callable<EntityExchangeResult<Map<String, Object>>> destination(String lease, int start, long epoch) {
        List<Map<String, Object>> ranks = new ArrayList<>();
        for (int r = 0; r < w.tp; r++) {
            ranks.add(Map.of("rank", r, "regionRef", w.destinationRegion(r), "slots", List.of(List.of(start, 8))));
        }
        return () -> exchange(w.fleet.postRaw(
                "/api/v1/leases/" + lease + "/destination",
                w.target.token(),
                Map.of("fencingEpoch", epoch, "ranks", ranks)));
    }

    private List<Callable<EntityExchangeResult<Map<String, Object>>>> acks(Set<String> leases, String type) {
        Fleet.Engine donor = w.donor;
        long epoch = w.epoch(donor);
        List<Callable<EntityExchangeResult<Map<String, Object>>>> acks = new ArrayList<>();
        for (Map<String, Object> c : commandsFor(donor, leases, type, w.tp * leases.size())) {
            acks.add(() -> {
                EntityExchangeResult<Map<String, Object>> r = exchange(w.ack(donor, c.get("commandId"), true, epoch));
                assertThat(r.getStatus().value()).isEqualTo(200);
                assertThat(r.getResponseBody()).containsEntry("leaseId", c.get("leaseId"));
                return r;
            });
        }
        return acks;
    }

    private static EntityExchangeResult<Map<String, Object>> exchange(WebTestClient.ResponseSpec spec) {
        return spec.expectBody(JSON).returnResult();
    }

    private static <T> List<T> race(int threads, List<Callable<T>> calls) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<T>> futures = new ArrayList<>();
            for (Callable<T> c : calls) {
                futures.add(pool.submit(c));
            }
            List<T> out = new ArrayList<>();
            for (Future<T> f : futures) {
                out.add(f.get());
            }
            return out;
        } finally {
            pool.shutdown();
        }
    }

    private List<Map<String, Object>> commandsFor(Fleet.Engine e, Set<String> leases, String type, int count) {
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

    private List<Map<String, Object>> ordersOf(Set<String> leases) {
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

    private long pinned() {
        return db.sql("SELECT COALESCE(sum(pin_count), 0) AS n FROM bank_block WHERE bank_id = CAST(:b AS UUID)")
                .bind("b", w.bankId)
                .map((r, m) -> ((Number) r.get("n")).longValue())
                .one()
                .block();
    }

    private long heldSlotRuns() {
        return db.sql("SELECT count(*) AS n FROM destination_slot_run WHERE incarnation_id = CAST(:t AS UUID) AND held")
                .bind("t", w.target.id())
                .map((r, m) -> ((Number) r.get("n")).longValue())
                .one()
                .block();
    }

    /** The lease's audit chain: transitions with their version and outcome, and actions. */
    private List<String> audit(String lease) {
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
