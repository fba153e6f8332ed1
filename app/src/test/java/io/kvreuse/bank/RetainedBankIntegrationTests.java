package io.kvreuse.bank;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.security.Role;
import io.kvreuse.support.Fleet;
import io.kvreuse.support.Fleet.Engine;
import io.kvreuse.support.IntegrationTest;
import io.kvreuse.support.TestTokens;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.MediaType;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.test.web.reactive.server.WebTestClient;

@IntegrationTest
class RetainedBankIntegrationTests {

    @Autowired
    WebTestClient http;

    @Autowired
    TestTokens tokens;

    @Autowired
    DatabaseClient db;

    Fleet fleet;
    String domain;
    Engine decode;

    @BeforeEach
    void fleet() {
        fleet = new Fleet(http, tokens);
        domain = fleet.domain(2, "GPU_CUDA_IPC");
        decode = fleet.ready("DECODE", domain, 2, Fleet.host());
    }

    @Test
    void bankPublishesOnlyWhenEveryPartIsReady() {
        Map<String, Object> bank = createBank(decode, 64, 201);
        String bankId = (String) bank.get("bankId");
        assertThat(bank.get("state")).isEqualTo("PENDING");
        Map<String, Object> one =
                fleet.post("/api/v1/banks/" + bankId + "/parts/0/ready", decode.token(), Map.of(), 200);
        assertThat(one.get("state")).isEqualTo("PENDING");
        Map<String, Object> both =
                fleet.post("/api/v1/banks/" + bankId + "/parts/1/ready", decode.token(), Map.of(), 200);
        assertThat(both.get("state")).isEqualTo("PUBLISHED");
    }

    @Test
    void repeatingTheSameCreateReturnsTheSameBankAndADifferentOneConflicts() {
        String first = (String) createBank(decode, 64, 201).get("bankId");
        assertThat(createBank(decode, 64, 200).get("bankId")).isEqualTo(first);
        fleet.postRaw("/api/v1/incarnations/" + decode.id() + "/banks", decode.token(), bankRequest(decode, 128))
                .expectStatus()
                .isEqualTo(409)
                .expectBody()
                .jsonPath("$.type")
                .isEqualTo("https://kvreuse.io/problems/bank-exists");
    }

    @Test
    void prefillIncarnationsRetainNoBank() {
        Engine prefill = fleet.ready("PREFILL", domain, 2, Fleet.host());
        fleet.postRaw("/api/v1/incarnations/" + prefill.id() + "/banks", prefill.token(), bankRequest(prefill, 64))
                .expectStatus()
                .isEqualTo(422)
                .expectHeader()
                .contentType(MediaType.APPLICATION_PROBLEM_JSON)
                .expectBody()
                .jsonPath("$.type")
                .isEqualTo("https://kvreuse.io/problems/not-a-decode-incarnation");
    }

    @Test
    void partsMustMatchRanksAndTheDomainsBlockSize() {
        Map<String, Object> oneRank = Map.of(
                "capacityBlocks",
                8,
                "parts",
                List.of(Map.of("rank", 0, "regionRef", "shm://x", "bytesPerBlock", 1048576)));
        fleet.postRaw("/api/v1/incarnations/" + decode.id() + "/banks", decode.token(), oneRank)
                .expectStatus()
                .isEqualTo(422)
                .expectBody()
                .jsonPath("$.type")
                .isEqualTo("https://kvreuse.io/problems/rank-layout-mismatch");
        Map<String, Object> wrongBytes = Map.of(
                "capacityBlocks",
                8,
                "parts",
                List.of(
                        Map.of("rank", 0, "regionRef", "shm://x", "bytesPerBlock", 4096),
                        Map.of("rank", 1, "regionRef", "shm://y", "bytesPerBlock", 4096)));
        fleet.postRaw("/api/v1/incarnations/" + decode.id() + "/banks", decode.token(), wrongBytes)
                .expectStatus()
                .isEqualTo(422)
                .expectBody()
                .jsonPath("$.type")
                .isEqualTo("https://kvreuse.io/problems/bytes-per-block-mismatch");
        fleet.postRaw(
                        "/api/v1/incarnations/" + decode.id() + "/banks",
                        decode.token(),
                        Map.of("capacityBlocks", 0, "parts", List.of()))
                .expectStatus()
                .isBadRequest()
                .expectBody()
                .jsonPath("$.type")
                .isEqualTo("https://kvreuse.io/problems/invalid-request");
    }

    @Test
    void anotherEnginesIncarnationOrBankIsNotFound() {
        String bankId = fleet.bank(decode, 2, 16);
        String other = tokens.mint(Role.ENGINE);
        fleet.postRaw("/api/v1/incarnations/" + decode.id() + "/banks", other, bankRequest(decode, 16))
                .expectStatus()
                .isNotFound();
        fleet.postRaw("/api/v1/banks/" + bankId + "/reset", other, Map.of())
                .expectStatus()
                .isNotFound();
        http.get()
                .uri("/api/v1/banks/" + bankId)
                .header("Authorization", "Bearer " + other)
                .exchange()
                .expectStatus()
                .isNotFound();
        http.get()
                .uri("/api/v1/banks/" + bankId)
                .header("Authorization", "Bearer " + tokens.operator())
                .exchange()
                .expectStatus()
                .isOk();
        http.get()
                .uri("/api/v1/banks/" + bankId)
                .header("Authorization", "Bearer " + tokens.mint(Role.ROUTER))
                .exchange()
                .expectStatus()
                .isForbidden();
    }

    @Test
    void blocksBecomeEligibleWhenEveryRankHoldsThemAtTheSameSlot() {
        String bankId = fleet.bank(decode, 2, 64);
        long[] chain = Fleet.chain(5);
        fleet.post("/api/v1/banks/" + bankId + "/events", decode.token(), events(0, 1, stored(chain, 0)), 200);
        assertThat(view(bankId).get("eligibleBlocks")).isEqualTo(0);
        fleet.post("/api/v1/banks/" + bankId + "/events", decode.token(), events(1, 1, stored(chain, 0)), 200);
        Map<String, Object> bank = view(bankId);
        assertThat(bank.get("eligibleBlocks")).isEqualTo(5);
        assertThat(bank.get("state")).isEqualTo("PUBLISHED");
        assertThat(blockRows(bankId)).isEqualTo(10);
    }

    @Test
    void alreadyAppliedEventsAreAcknowledgedWithoutEffect() {
        String bankId = fleet.bank(decode, 2, 64);
        long[] chain = Fleet.chain(3);
        Map<String, Object> batch = events(0, 1, stored(chain, 0));
        assertThat(fleet.post("/api/v1/banks/" + bankId + "/events", decode.token(), batch, 200))
                .containsEntry("appliedThroughEventId", 1);
        fleet.post("/api/v1/banks/" + bankId + "/events", decode.token(), events(0, 2, removed(chain[2])), 200);
        assertThat(fleet.post("/api/v1/banks/" + bankId + "/events", decode.token(), batch, 200))
                .containsEntry("appliedThroughEventId", 2);
        assertThat(blockRows(bankId)).isEqualTo(2);
    }

    @Test
    void aGapIsAConflictThatUnpublishesUntilASnapshot() {
        String bankId = fleet.bank(decode, 2, 64);
        long[] chain = Fleet.chain(4);
        fleet.post("/api/v1/banks/" + bankId + "/events", decode.token(), events(0, 1, stored(chain, 0)), 200);
        fleet.post("/api/v1/banks/" + bankId + "/events", decode.token(), events(1, 1, stored(chain, 0)), 200);

        fleet.postRaw("/api/v1/banks/" + bankId + "/events", decode.token(), events(0, 5, removed(chain[3])))
                .expectStatus()
                .isEqualTo(409)
                .expectHeader()
                .contentType(MediaType.APPLICATION_PROBLEM_JSON)
                .expectBody()
                .jsonPath("$.type")
                .isEqualTo("https://kvreuse.io/problems/event-gap")
                .jsonPath("$.expectedEventId")
                .isEqualTo(2);
        assertThat(view(bankId)).containsEntry("state", "UNPUBLISHED").containsEntry("unpublishedReason", "EVENT_GAP");
        fleet.postRaw("/api/v1/banks/" + bankId + "/events", decode.token(), events(0, 2, removed(chain[3])))
                .expectStatus()
                .isEqualTo(409)
                .expectBody()
                .jsonPath("$.type")
                .isEqualTo("https://kvreuse.io/problems/snapshot-required");

        Map<String, Object> snapshot = Map.of(
                "throughEventId",
                6,
                "blocks",
                stored(java.util.Arrays.copyOf(chain, 3), 0).get("blocks"));
        Map<String, Object> restored = http.put()
                .uri("/api/v1/banks/" + bankId + "/parts/0/snapshot")
                .header("Authorization", "Bearer " + decode.token())
                .contentType(MediaType.APPLICATION_JSON)
                .bodyValue(snapshot)
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody(new org.springframework.core.ParameterizedTypeReference<Map<String, Object>>() {})
                .returnResult()
                .getResponseBody();
        assertThat(restored).containsEntry("state", "PUBLISHED").containsEntry("eligibleBlocks", 3);
        fleet.post("/api/v1/banks/" + bankId + "/events", decode.token(), events(0, 7, removed(chain[2])), 200);
    }

    @Test
    void aNativeCacheClearChangesNothingInTheRetainedBank() {
        String bankId = fleet.bank(decode, 2, 64);
        long[] chain = Fleet.chain(6);
        fleet.post("/api/v1/banks/" + bankId + "/events", decode.token(), events(0, 1, stored(chain, 0)), 200);
        fleet.post("/api/v1/banks/" + bankId + "/events", decode.token(), events(1, 1, stored(chain, 0)), 200);
        Map<String, Object> before = view(bankId);
        for (int rank = 0; rank < 2; rank++) {
            fleet.post(
                    "/api/v1/banks/" + bankId + "/events",
                    decode.token(),
                    Map.of("rank", rank, "firstEventId", 2, "events", List.of(Map.of("type", "NATIVE_CACHE_CLEARED"))),
                    200);
        }
        Map<String, Object> after = view(bankId);
        assertThat(after.get("eligibleBlocks"))
                .isEqualTo(before.get("eligibleBlocks"))
                .isEqualTo(6);
        assertThat(after.get("state")).isEqualTo("PUBLISHED");
        assertThat(after.get("bankEpoch")).isEqualTo(before.get("bankEpoch"));
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> parts = (List<Map<String, Object>>) after.get("parts");
        assertThat(parts)
                .allSatisfy(
                        p -> assertThat(p).containsEntry("nativeCacheClears", 1).containsEntry("blocks", 6));
    }

    @Test
    void ranksThatDisagreeUnpublishTheBankUntilReset() {
        String bankId = fleet.bank(decode, 2, 64);
        long[] chain = Fleet.chain(2);
        fleet.post("/api/v1/banks/" + bankId + "/events", decode.token(), events(0, 1, stored(chain, 0)), 200);
        fleet.post("/api/v1/banks/" + bankId + "/events", decode.token(), events(1, 1, stored(chain, 10)), 200);
        assertThat(view(bankId))
                .containsEntry("state", "UNPUBLISHED")
                .containsEntry("unpublishedReason", "RANK_DISAGREEMENT")
                .containsEntry("eligibleBlocks", 0);
        Map<String, Object> reset = fleet.post("/api/v1/banks/" + bankId + "/reset", decode.token(), Map.of(), 200);
        assertThat(reset)
                .containsEntry("state", "PUBLISHED")
                .containsEntry("bankEpoch", 2)
                .containsEntry("eligibleBlocks", 0);
        assertThat(blockRows(bankId)).isZero();
    }

    @Test
    void anInvalidBatchAppliesNothing() {
        String bankId = fleet.bank(decode, 2, 8);
        long[] chain = Fleet.chain(3);
        Map<String, Object> batch = events(0, 1, stored(chain, 6));
        fleet.postRaw("/api/v1/banks/" + bankId + "/events", decode.token(), batch)
                .expectStatus()
                .isBadRequest()
                .expectBody()
                .jsonPath("$.type")
                .isEqualTo("https://kvreuse.io/problems/slot-out-of-range");
        fleet.postRaw(
                        "/api/v1/banks/" + bankId + "/events",
                        decode.token(),
                        "{\"rank\":0,\"firstEventId\":1,\"events\":[{\"type\":\"EXPLODED\"}]}")
                .expectStatus()
                .isBadRequest()
                .expectBody()
                .jsonPath("$.type")
                .isEqualTo("https://kvreuse.io/problems/malformed-request");
        assertThat(blockRows(bankId)).isZero();
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> parts =
                (List<Map<String, Object>>) view(bankId).get("parts");
        assertThat(parts).allSatisfy(p -> assertThat(p).containsEntry("appliedThroughEventId", 0));
    }

    @Test
    void aChildStoredAtTheWrongPositionUnderAStoredParentIsRefused() {
        String bankId = fleet.bank(decode, 2, 16);
        long[] chain = Fleet.chain(2);
        fleet.post(
                "/api/v1/banks/" + bankId + "/events",
                decode.token(),
                events(0, 1, stored(new long[] {chain[0]}, 0)),
                200);
        Map<String, Object> child = new LinkedHashMap<>();
        child.put("seqHash", Long.toUnsignedString(chain[1]));
        child.put("parentHash", Long.toUnsignedString(chain[0]));
        child.put("position", 3);
        child.put("slot", 1);
        fleet.postRaw(
                        "/api/v1/banks/" + bankId + "/events",
                        decode.token(),
                        Map.of(
                                "rank",
                                0,
                                "firstEventId",
                                2,
                                "events",
                                List.of(Map.of("type", "STORED", "blocks", List.of(child)))))
                .expectStatus()
                .isBadRequest()
                .expectBody()
                .jsonPath("$.type")
                .isEqualTo("https://kvreuse.io/problems/position-contradicts-parent");
    }

    private Map<String, Object> createBank(Engine e, int capacity, int status) {
        return fleet.post("/api/v1/incarnations/" + e.id() + "/banks", e.token(), bankRequest(e, capacity), status);
    }

    private static Map<String, Object> bankRequest(Engine e, int capacity) {
        return Map.of(
                "capacityBlocks",
                capacity,
                "parts",
                List.of(
                        Map.of("rank", 0, "regionRef", "shm://" + e.id() + "-0", "bytesPerBlock", 1048576),
                        Map.of("rank", 1, "regionRef", "shm://" + e.id() + "-1", "bytesPerBlock", 1048576)));
    }

    static Map<String, Object> events(int rank, long first, Map<String, Object>... events) {
        return Map.of("rank", rank, "firstEventId", first, "events", List.of(events));
    }

    static Map<String, Object> stored(long[] chain, int firstSlot) {
        List<Map<String, Object>> blocks = new java.util.ArrayList<>();
        for (int i = 0; i < chain.length; i++) {
            Map<String, Object> b = new LinkedHashMap<>();
            b.put("seqHash", Long.toUnsignedString(chain[i]));
            if (i > 0) {
                b.put("parentHash", Long.toUnsignedString(chain[i - 1]));
            }
            b.put("position", i);
            b.put("slot", firstSlot + i);
            blocks.add(b);
        }
        return Map.of("type", "STORED", "blocks", blocks);
    }

    static Map<String, Object> removed(long... hashes) {
        return Map.of(
                "type",
                "REMOVED",
                "seqHashes",
                java.util.Arrays.stream(hashes).mapToObj(Long::toUnsignedString).toList());
    }

    private Map<String, Object> view(String bankId) {
        return fleet.get("/api/v1/banks/" + bankId, decode.token());
    }

    private long blockRows(String bankId) {
        return db.sql("SELECT count(*) AS n FROM bank_block WHERE bank_id = :b")
                .bind("b", UUID.fromString(bankId))
                .map((row, meta) -> row.get("n", Long.class))
                .one()
                .block(Duration.ofSeconds(5));
    }
}
