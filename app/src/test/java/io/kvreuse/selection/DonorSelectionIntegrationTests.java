package io.kvreuse.selection;

import static io.kvreuse.selection.SelectionTestSupport.assertNoHint;
import static io.kvreuse.selection.SelectionTestSupport.concat;
import static io.kvreuse.selection.SelectionTestSupport.payload;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.bank.InventoryFeed;
import io.kvreuse.security.Role;
import io.kvreuse.support.Fleet;
import io.kvreuse.support.Fleet.Engine;
import io.kvreuse.support.IntegrationTest;
import io.kvreuse.support.ReuseSettingsFixture;
import io.kvreuse.support.TestTokens;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.MediaType;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.test.web.reactive.server.WebTestClient;

/** Every decision of DESIGN §4, each no-hint reason reached on purpose. */
@IntegrationTest
class DonorSelectionIntegrationTests {

    @Autowired
    WebTestClient http;

    @Autowired
    TestTokens tokens;

    @Autowired
    InventoryFeed inventory;

    @Autowired
    FleetDirectory directory;

    @Autowired
    DatabaseClient db;

    Fleet fleet;
    ReuseSettingsFixture settings;
    SelectionTestSupport s;
    String domain;
    String host;

    @BeforeEach
    void setUp() {
        fleet = new Fleet(http, tokens);
        settings = new ReuseSettingsFixture(http, tokens.operator());
        settings.apply(ReuseSettingsFixture::permissive);
        s = new SelectionTestSupport(http, fleet, inventory, directory, db, tokens.mint(Role.ROUTER));
        domain = fleet.domain(2, "GPU_CUDA_IPC");
        host = Fleet.host();
    }

    @AfterEach
    void restore() {
        settings.restore();
    }

    @Test
    void coveredChainOnTheSameHostGetsAHintAndAProposedLease() {
        var donor = s.donor(domain, 2, host, Fleet.chain(48));
        Engine target = s.target(domain, 2, host);
        long[] request = concat(donor.chain(), Fleet.chain(16));
        Map<String, Object> response = s.select(target.id(), request, 8);
        Map<String, Object> payload = payload(response);
        assertThat(payload)
                .containsEntry("local_prefix_blocks", 8)
                .containsEntry("fetch_blocks", 40)
                .containsEntry("transport_class", "GPU_CUDA_IPC")
                .containsEntry("domain_id", domain);
        @SuppressWarnings("unchecked")
        Map<String, Object> source = (Map<String, Object>) payload.get("source");
        assertThat(source)
                .containsEntry("incarnation_id", donor.engine().id())
                .containsEntry("bank_id", donor.bankId());
        assertThat(payload.get("source_slot_runs")).isEqualTo(List.of(List.of(8, 40)));
        assertThat((List<?>) payload.get("parts")).hasSize(2);
        @SuppressWarnings("unchecked")
        Map<String, Object> predicted = (Map<String, Object>) response.get("predicted");
        assertThat(((Number) predicted.get("gainMs")).doubleValue()).isPositive();
        String state = db.sql("SELECT state FROM lease WHERE lease_id = :id")
                .bind("id", UUID.fromString((String) response.get("leaseId")))
                .map((row, meta) -> row.get("state", String.class))
                .one()
                .block(Duration.ofSeconds(5));
        assertThat(state).isEqualTo("PROPOSED");
    }

    @Test
    void aProposedLeaseIsOneRowAndItsDonorsPollHandsOutOnePinPerRankAndNoneToItsTarget() {
        var donor = s.donor(domain, 2, host, Fleet.chain(48));
        Engine target = s.target(domain, 2, host);
        // the donor has polled before: nothing was due, so its key is quiet until a notification
        assertThat(commands(donor.engine(), 0)).isEmpty();
        Map<String, Object> response = s.select(target.id(), concat(donor.chain(), Fleet.chain(16)), 8);
        UUID lease = UUID.fromString((String) response.get("leaseId"));
        long written = db.sql("SELECT count(*) AS n FROM engine_command WHERE lease_id = :id")
                .bind("id", lease)
                .map((r, m) -> r.get("n", Long.class))
                .one()
                .block(Duration.ofSeconds(5));
        assertThat(written).as("the proposal writes the lease row only").isZero();
        // a waiting poll trusts the quiet key unless the proposal's wake-up cleared it
        List<Map<String, Object>> handed = commands(donor.engine(), 5_000);
        assertThat(handed).hasSize(2);
        assertThat(handed).extracting(c -> c.get("rank")).containsExactly(0, 1);
        assertThat(handed)
                .allSatisfy(c -> assertThat(c)
                        .containsEntry("type", "PIN")
                        .containsEntry("leaseId", lease.toString())
                        .containsEntry("deliveries", 1)
                        .containsEntry("fetchBlocks", 40)
                        .containsEntry("bankId", donor.bankId()));
        var commands = db.sql("""
                        SELECT c.incarnation_id, c.created_at = l.created_at AS with_lease, c.acked_at IS NULL AS pending
                        FROM engine_command c JOIN lease l ON l.lease_id = c.lease_id
                        WHERE c.lease_id = :id ORDER BY c.rank
                        """).bind("id", lease).fetch().all().collectList().block(Duration.ofSeconds(5));
        assertThat(commands)
                .hasSize(2)
                .allSatisfy(c -> assertThat(c)
                        .containsEntry(
                                "incarnation_id", UUID.fromString(donor.engine().id()))
                        .containsEntry("with_lease", true)
                        .containsEntry("pending", true));
        assertThat(commands(donor.engine(), 0))
                .as("handed out, not issued again")
                .isEmpty();
        assertThat(commands(target, 0)).isEmpty();
        var row = db.sql("""
                        SELECT fetch_blocks, local_prefix_blocks, seq_hashes, action_type, donor_epoch, target_epoch
                        FROM lease WHERE lease_id = :id
                        """).bind("id", lease).fetch().one().block(Duration.ofSeconds(5));
        assertThat(row).containsEntry("fetch_blocks", 40).containsEntry("local_prefix_blocks", 8);
        assertThat(row.get("seq_hashes"))
                .isEqualTo(java.util.Arrays.stream(donor.chain(), 8, 48).boxed().toArray(Long[]::new));
        assertThat(row).containsEntry("action_type", "kv.fetch_gpu");
    }

    @Test
    void disabledReuseAnswersDisabled() {
        var donor = s.donor(domain, 2, host, Fleet.chain(16));
        Engine target = s.target(domain, 2, host);
        settings.apply(doc -> doc.put("enabled", false));
        assertNoHint(s.select(target.id(), donor.chain(), 0), NoHintReason.DISABLED);
    }

    @Test
    void targetsThatAreNotReadyPrefillIncarnationsAnswerNotPrefill() {
        var donor = s.donor(domain, 2, host, Fleet.chain(16));
        assertNoHint(s.select(donor.engine().id(), donor.chain(), 0), NoHintReason.NOT_PREFILL);
        assertNoHint(s.select(UUID.randomUUID().toString(), donor.chain(), 0), NoHintReason.NOT_PREFILL);
        Engine registeredOnly = fleet.register("PREFILL", domain, 2, host);
        s.awaitDirectory(registeredOnly.id());
        assertNoHint(s.select(registeredOnly.id(), donor.chain(), 0), NoHintReason.NOT_PREFILL);
    }

    @Test
    void targetWithoutTheActionCapabilityAnswersNotCapable() {
        var donor = s.donor(domain, 2, host, Fleet.chain(16));
        Engine target = fleet.register("PREFILL", domain, 2, host, List.of("kv.fetch@1.0"));
        fleet.heartbeat(target);
        s.awaitDirectory(target.id());
        assertNoHint(s.select(target.id(), donor.chain(), 0), NoHintReason.NOT_CAPABLE);
    }

    @Test
    void donorWithoutTheActionCapabilityIsNotChosen() {
        long[] chain = Fleet.chain(16);
        Engine decode = fleet.register("DECODE", domain, 2, host, List.of("kv.fetch@1.0"));
        fleet.heartbeat(decode);
        String bankId = fleet.bank(decode, 2, 64);
        fleet.storeChain(decode, bankId, 2, chain, 0, new long[] {1, 1});
        s.awaitIndexed(bankId);
        s.awaitDirectory(decode.id());
        Engine target = s.target(domain, 2, host);
        assertNoHint(s.select(target.id(), chain, 0), NoHintReason.NOT_CAPABLE);
    }

    @Test
    void revokedDomainAnswersDomainNotCertified() {
        var donor = s.donor(domain, 2, host, Fleet.chain(16));
        Engine target = s.target(domain, 2, host);
        fleet.post(
                "/api/v1/domains/" + domain + "/revoke",
                tokens.operator(),
                Map.of("reason", "certification drift"),
                200);
        SelectionTestSupport.await(() -> !directory.domain(domain).certified(), "domain revoked in the directory");
        assertNoHint(s.select(target.id(), donor.chain(), 0), NoHintReason.DOMAIN_NOT_CERTIFIED);
    }

    @Test
    void unknownChainAnswersNoCoverage() {
        s.donor(domain, 2, host, Fleet.chain(16));
        Engine target = s.target(domain, 2, host);
        assertNoHint(s.select(target.id(), Fleet.chain(16), 0), NoHintReason.NO_COVERAGE);
    }

    @Test
    void coverageNoLongerThanWhatTheTargetHoldsAnswersNoCoverage() {
        var donor = s.donor(domain, 2, host, Fleet.chain(16));
        Engine target = s.target(domain, 2, host);
        assertNoHint(s.select(target.id(), concat(donor.chain(), Fleet.chain(8)), 16), NoHintReason.NO_COVERAGE);
    }

    @Test
    void donorThatLeftReadyBeforeItsBankWasUnpublishedAnswersDonorUnavailable() {
        var donor = s.donor(domain, 2, host, Fleet.chain(16));
        Engine target = s.target(domain, 2, host);
        // the row changes without the owner event that unpublishes the bank: the window a replica sees
        db.sql("UPDATE engine_incarnation SET state = 'DRAINING' WHERE incarnation_id = :i")
                .bind("i", UUID.fromString(donor.engine().id()))
                .then()
                .block(Duration.ofSeconds(5));
        s.awaitDirectory(donor.engine().id());
        assertNoHint(s.select(target.id(), donor.chain(), 0), NoHintReason.DONOR_UNAVAILABLE);
    }

    @Test
    void donorThatDrainsIsUnpublishedAndNeverChosen() {
        var donor = s.donor(domain, 2, host, Fleet.chain(16));
        Engine target = s.target(domain, 2, host);
        fleet.post(
                "/api/v1/incarnations/" + donor.engine().id() + "/drain",
                donor.engine().token(),
                Map.of(),
                200);
        s.awaitDirectory(donor.engine().id());
        SelectionTestSupport.await(
                () -> {
                    Map<String, Object> r = s.select(target.id(), donor.chain(), 0);
                    return "NO_HINT".equals(r.get("decision"));
                },
                "no hint from a draining donor");
        // the bank follows its owner's state asynchronously (the directory may see DRAINING first)
        SelectionTestSupport.await(
                () -> "UNPUBLISHED"
                        .equals(fleet.get("/api/v1/banks/" + donor.bankId(), tokens.operator())
                                .get("state")),
                "bank of a draining donor unpublished");
    }

    @Test
    void donorOnAnotherHostIsUnreachableOverCudaIpc() {
        var donor = s.donor(domain, 2, host, Fleet.chain(16));
        Engine target = s.target(domain, 2, Fleet.host());
        assertNoHint(s.select(target.id(), donor.chain(), 0), NoHintReason.UNREACHABLE);
    }

    @Test
    void multiNodeNvlinkNeedsTheSameFabricAndTheSetting() {
        String mnnvl = fleet.domain(2, "GPU_MNNVL");
        long[] chain = Fleet.chain(16);
        Engine decode = registerWithFabric("DECODE", mnnvl, Fleet.host(), "nvl-fabric-a");
        String bankId = fleet.bank(decode, 2, 64);
        fleet.storeChain(decode, bankId, 2, chain, 0, new long[] {1, 1});
        s.awaitIndexed(bankId);
        s.awaitDirectory(decode.id());
        Engine sameFabric = registerWithFabric("PREFILL", mnnvl, Fleet.host(), "nvl-fabric-a");
        Engine otherFabric = registerWithFabric("PREFILL", mnnvl, Fleet.host(), "nvl-fabric-b");
        s.awaitDirectory(sameFabric.id());
        s.awaitDirectory(otherFabric.id());
        // the domain's own notification may land after the incarnations'
        s.awaitDomain(mnnvl);

        assertNoHint(s.select(sameFabric.id(), chain, 0), NoHintReason.UNREACHABLE);
        settings.apply(doc -> doc.put("allowMnnvl", true));
        assertThat(payload(s.select(sameFabric.id(), chain, 0))).containsEntry("transport_class", "GPU_MNNVL");
        assertNoHint(s.select(otherFabric.id(), chain, 0), NoHintReason.UNREACHABLE);
    }

    @Test
    void targetAndDonorCapsAnswerAtCapacity() {
        var donor = s.donor(domain, 2, host, Fleet.chain(16));
        Engine target = s.target(domain, 2, host);
        Engine other = s.target(domain, 2, host);
        settings.apply(doc -> {
            doc.put("maxInflightPerTarget", 1);
            doc.put("maxInflightPerDonor", 2);
        });
        payload(s.select(target.id(), donor.chain(), 0));
        assertNoHint(s.select(target.id(), donor.chain(), 0), NoHintReason.AT_CAPACITY);
        payload(s.select(other.id(), donor.chain(), 0));
        Engine third = s.target(domain, 2, host);
        assertNoHint(s.select(third.id(), donor.chain(), 0), NoHintReason.AT_CAPACITY);
    }

    @Test
    void tooFewFetchableBlocksAnswerBelowMinBlocks() {
        var donor = s.donor(domain, 2, host, Fleet.chain(12));
        Engine target = s.target(domain, 2, host);
        settings.apply(doc -> doc.put("minFetchBlocks", 8));
        assertNoHint(s.select(target.id(), concat(donor.chain(), Fleet.chain(20)), 6), NoHintReason.BELOW_MIN_BLOCKS);
        assertNoHint(s.select(target.id(), donor.chain(), 6), NoHintReason.BELOW_MIN_BLOCKS);
    }

    @Test
    void aGainBelowTheThresholdsAnswersUnprofitable() {
        var donor = s.donor(domain, 2, host, Fleet.chain(16));
        Engine target = s.target(domain, 2, host);
        settings.apply(doc -> doc.put("minGainMs", 500_000.0));
        assertNoHint(s.select(target.id(), donor.chain(), 0), NoHintReason.UNPROFITABLE);
        settings.apply(doc -> {
            doc.put("minGainMs", 0.0);
            doc.put("minGainRatio", 0.999);
        });
        assertNoHint(s.select(target.id(), donor.chain(), 0), NoHintReason.UNPROFITABLE);
    }

    @Test
    void aByteBudgetTooSmallForMinBlocksAnswersBudget() {
        var donor = s.donor(domain, 2, host, Fleet.chain(16));
        Engine target = s.target(domain, 2, host);
        settings.apply(doc -> {
            doc.put("minFetchBlocks", 4);
            doc.put("maxFetchBytes", 2L * 3 * 1048576);
        });
        assertNoHint(s.select(target.id(), donor.chain(), 0), NoHintReason.BUDGET);
        settings.apply(doc -> doc.put("maxFetchBytes", 2L * 5 * 1048576));
        assertThat(payload(s.select(target.id(), donor.chain(), 0))).containsEntry("fetch_blocks", 5);
    }

    @Test
    void aStoreThatCannotRecordTheLeaseAnswersStoreUnavailableThenRecovers() {
        var donor = s.donor(domain, 2, host, Fleet.chain(16));
        Engine target = s.target(domain, 2, host);
        String fn = "fail_" + UUID.randomUUID().toString().replace("-", "");
        db.sql("CREATE FUNCTION " + fn + "() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                        + "IF NEW.target_incarnation_id = '" + target.id()
                        + "' THEN RAISE EXCEPTION 'store outage'; END IF; RETURN NEW; END; $$")
                .then()
                .block(Duration.ofSeconds(5));
        db.sql("CREATE TRIGGER " + fn + " BEFORE INSERT ON lease FOR EACH ROW EXECUTE FUNCTION " + fn + "()")
                .then()
                .block(Duration.ofSeconds(5));
        try {
            assertNoHint(s.select(target.id(), donor.chain(), 0), NoHintReason.STORE_UNAVAILABLE);
        } finally {
            db.sql("DROP TRIGGER " + fn + " ON lease")
                    .then()
                    .then(db.sql("DROP FUNCTION " + fn + "()").then())
                    .block(Duration.ofSeconds(5));
        }
        SelectionTestSupport.await(
                () -> "HINT".equals(s.select(target.id(), donor.chain(), 0).get("decision")),
                "selection recovers once the store records leases again");
    }

    @Test
    void aDeadlineThatPassesWhileTheStoreIsBusyAnswersDeadlineInTime() {
        var donor = s.donor(domain, 2, host, Fleet.chain(16));
        Engine target = s.target(domain, 2, host);
        var locker = db.sql("LOCK TABLE lease IN ACCESS EXCLUSIVE MODE")
                .then()
                .then(reactor.core.publisher.Mono.delay(Duration.ofSeconds(2)))
                .as(tx -> org.springframework.transaction.reactive.TransactionalOperator.create(
                                new org.springframework.r2dbc.connection.R2dbcTransactionManager(
                                        db.getConnectionFactory()))
                        .transactional(tx))
                .subscribe();
        try {
            SelectionTestSupport.await(() -> locked(), "lease table locked");
            long start = System.nanoTime();
            Map<String, Object> answer = s.select(target.id(), donor.chain(), 0, null, 50);
            long tookMs = (System.nanoTime() - start) / 1_000_000;
            assertThat(answer.get("decision")).isEqualTo("NO_HINT");
            assertThat(answer.get("reason")).isEqualTo("DEADLINE");
            assertThat(tookMs)
                    .as("answered within the deadline plus HTTP overhead")
                    .isLessThan(1000);
        } finally {
            locker.dispose();
        }
    }

    @Test
    void aResetBankNeverServesItsOldBlocks() {
        var donor = s.donor(domain, 2, host, Fleet.chain(16));
        Engine target = s.target(domain, 2, host);
        payload(s.select(target.id(), donor.chain(), 0));
        fleet.post("/api/v1/banks/" + donor.bankId() + "/reset", donor.engine().token(), Map.of(), 200);
        s.awaitIndexed(donor.bankId());
        assertNoHint(s.select(target.id(), donor.chain(), 0), NoHintReason.NO_COVERAGE);
    }

    @Test
    void malformedRequestsAreProblemsNotAnswers() {
        Engine target = s.target(domain, 2, host);
        http.post()
                .uri("/api/v1/donor-selections")
                .header("Authorization", "Bearer " + s.router)
                .contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of(
                        "requestId",
                        "r",
                        "targetIncarnationId",
                        target.id(),
                        "seqHashes",
                        List.of("12", "x"),
                        "localPrefixBlocks",
                        0))
                .exchange()
                .expectStatus()
                .isBadRequest()
                .expectBody()
                .jsonPath("$.type")
                .isEqualTo("https://kvreuse.io/problems/invalid-hash");
        http.post()
                .uri("/api/v1/donor-selections")
                .header("Authorization", "Bearer " + s.router)
                .contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of(
                        "requestId",
                        "r",
                        "targetIncarnationId",
                        target.id(),
                        "seqHashes",
                        List.of(),
                        "localPrefixBlocks",
                        0))
                .exchange()
                .expectStatus()
                .isBadRequest()
                .expectBody()
                .jsonPath("$.type")
                .isEqualTo("https://kvreuse.io/problems/invalid-request");
        http.post()
                .uri("/api/v1/donor-selections")
                .header("Authorization", "Bearer " + tokens.mint(Role.ENGINE))
                .contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of(
                        "requestId",
                        "r",
                        "targetIncarnationId",
                        target.id(),
                        "seqHashes",
                        List.of("1"),
                        "localPrefixBlocks",
                        0))
                .exchange()
                .expectStatus()
                .isForbidden();
    }

    @Test
    void aNullHashIsAnInvalidRequestAndProposesNothing() {
        var donor = s.donor(domain, 2, host, Fleet.chain(16));
        Engine target = s.target(domain, 2, host);
        List<String> hashes = new java.util.ArrayList<>(java.util.Arrays.stream(donor.chain())
                .mapToObj(Long::toUnsignedString)
                .toList());
        hashes.set(3, null);
        Map<String, Object> single = new java.util.HashMap<>(
                Map.of("requestId", "null-hash", "targetIncarnationId", target.id(), "localPrefixBlocks", 0));
        single.put("seqHashes", hashes);
        for (var call : List.of(
                Map.entry("/api/v1/donor-selections", (Object) single),
                Map.entry("/api/v1/donor-selections/batch", (Object) Map.of("selections", List.of(single))))) {
            http.post()
                    .uri(call.getKey())
                    .header("Authorization", "Bearer " + s.router)
                    .contentType(MediaType.APPLICATION_JSON)
                    .bodyValue(call.getValue())
                    .exchange()
                    .expectStatus()
                    .isBadRequest()
                    .expectHeader()
                    .contentType(MediaType.APPLICATION_PROBLEM_JSON)
                    .expectBody()
                    .jsonPath("$.type")
                    .isEqualTo("https://kvreuse.io/problems/invalid-request")
                    .jsonPath("$.detail")
                    .value(d -> assertThat((String) d).contains("seqHashes[3]"))
                    .jsonPath("$.decision")
                    .doesNotExist();
        }
        assertThat(leasesOf(target.id()))
                .as("a refused selection proposes no lease")
                .isZero();
        payload(s.select(target.id(), donor.chain(), 0));
        assertThat(leasesOf(target.id()))
                .as("the same chain without the null proposes one")
                .isEqualTo(1);
    }

    private long leasesOf(String targetId) {
        Long n = db.sql("SELECT count(*) AS n FROM lease WHERE target_incarnation_id = CAST(:t AS UUID)")
                .bind("t", targetId)
                .map((row, meta) -> row.get("n", Long.class))
                .one()
                .block(Duration.ofSeconds(5));
        return n == null ? 0 : n;
    }

    private boolean locked() {
        Long n = db.sql("SELECT count(*) AS n FROM pg_locks l JOIN pg_class c ON c.oid = l.relation "
                        + "WHERE c.relname = 'lease' AND l.mode = 'AccessExclusiveLock' AND l.granted")
                .map((row, meta) -> row.get("n", Long.class))
                .one()
                .block(Duration.ofSeconds(5));
        return n != null && n > 0;
    }

    private Engine registerWithFabric(String role, String domainId, String hostId, String fabric) {
        String token = tokens.mint(Role.ENGINE);
        Map<String, Object> body = fleet.post(
                "/api/v1/incarnations",
                token,
                Map.of(
                        "role",
                        role,
                        "domainId",
                        domainId,
                        "hostId",
                        hostId,
                        "fabricDomain",
                        fabric,
                        "controlEndpoint",
                        "tcp://" + hostId + ":5557",
                        "capabilities",
                        List.of("kv.fetch_gpu@1.0"),
                        "ranks",
                        List.of(
                                Map.of("rank", 0, "gpuOrdinal", 0, "gpuUuid", "GPU-" + UUID.randomUUID()),
                                Map.of("rank", 1, "gpuOrdinal", 1, "gpuUuid", "GPU-" + UUID.randomUUID()))),
                201);
        Engine e = new Engine((String) body.get("incarnationId"), token, hostId, domainId);
        fleet.heartbeat(e);
        return e;
    }

    private List<Map<String, Object>> commands(Engine e, long waitMs) {
        return http.get()
                .uri("/api/v1/incarnations/" + e.id() + "/commands?waitMs=" + waitMs)
                .header("Authorization", "Bearer " + e.token())
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody(new org.springframework.core.ParameterizedTypeReference<List<Map<String, Object>>>() {})
                .returnResult()
                .getResponseBody();
    }
}
