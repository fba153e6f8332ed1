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
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * Engines that register ready, the donor with its bank ready, take part in selection without a
 * single heartbeat or part-ready call. The fleet directory and the index learn of them only through
 * the database's notifications, as every other replica does.
 */
@IntegrationTest
class ReadyRegistrationSelectionIntegrationTests {

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
    String engineToken;

    @BeforeEach
    void setUp() {
        fleet = new Fleet(http, tokens);
        settings = new ReuseSettingsFixture(http, tokens.operator());
        settings.apply(ReuseSettingsFixture::permissive);
        s = new SelectionTestSupport(http, fleet, inventory, directory, db, tokens.mint(Role.ROUTER));
        domain = fleet.domain(2, "GPU_CUDA_IPC");
        host = Fleet.host();
        engineToken = tokens.mint(Role.ENGINE);
    }

    @AfterEach
    void restore() {
        settings.restore();
    }

    @Test
    void readyRegistrationsGetAHintWithoutAnyHeartbeat() {
        Map<String, Object> donorAnswer =
                fleet.post("/api/v1/incarnations", engineToken, registration("DECODE", 0, true, true), 201);
        assertThat(donorAnswer).containsEntry("state", "READY").containsEntry("fencingEpoch", 2);
        String donorId = (String) donorAnswer.get("incarnationId");
        String bankId = (String) donorAnswer.get("bankId");
        Engine donor = new Engine(donorId, engineToken, host, domain);
        long[] chain = Fleet.chain(16);
        fleet.storeChain(donor, bankId, 2, chain, 0, new long[] {1, 1});

        Map<String, Object> targetAnswer =
                fleet.post("/api/v1/incarnations", engineToken, registration("PREFILL", 2, true, false), 201);
        assertThat(targetAnswer).containsEntry("state", "READY").doesNotContainKey("bankId");
        String targetId = (String) targetAnswer.get("incarnationId");

        s.awaitIndexed(bankId);
        s.awaitDirectory(donorId);
        s.awaitDirectory(targetId);
        s.awaitDomain(domain);
        Map<String, Object> payload = payload(s.select(targetId, concat(chain, Fleet.chain(1)), 0));
        assertThat(payload).containsEntry("fetch_blocks", 16).containsEntry("domain_id", domain);
        @SuppressWarnings("unchecked")
        Map<String, Object> source = (Map<String, Object>) payload.get("source");
        assertThat(source)
                .containsEntry("incarnation_id", donorId)
                .containsEntry("fencing_epoch", 2)
                .containsEntry("bank_id", bankId)
                .containsEntry("bank_epoch", 1);
        @SuppressWarnings("unchecked")
        Map<String, Object> target = (Map<String, Object>) payload.get("target");
        assertThat(target).containsEntry("incarnation_id", targetId).containsEntry("fencing_epoch", 2);
        assertThat(directory.incarnation(UUID.fromString(donorId)).isReady()).isTrue();
        assertThat(directory.incarnation(UUID.fromString(targetId)).fencingEpoch())
                .isEqualTo(2);
    }

    @Test
    void aTargetRegisteredWithoutReadyGetsNoHintUntilItsFirstHeartbeat() {
        var donor = s.donor(domain, 2, host, Fleet.chain(16));
        Map<String, Object> answer =
                fleet.post("/api/v1/incarnations", engineToken, registration("PREFILL", 4, false, false), 201);
        assertThat(answer).containsEntry("state", "REGISTERED");
        String targetId = (String) answer.get("incarnationId");
        s.awaitDirectory(targetId);
        assertNoHint(s.select(targetId, donor.chain(), 0), NoHintReason.NOT_PREFILL);
        fleet.heartbeat(new Engine(targetId, engineToken, host, domain));
        s.awaitDirectory(targetId);
        assertThat(payload(s.select(targetId, donor.chain(), 0))).containsEntry("fetch_blocks", 16);
    }

    private Map<String, Object> registration(String role, int firstGpu, boolean ready, boolean withBank) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("stableName", role.toLowerCase() + "-" + UUID.randomUUID());
        body.put("role", role);
        body.put("domainId", domain);
        body.put("hostId", host);
        body.put("controlEndpoint", "tcp://" + host + ":5557");
        body.put("capabilities", List.of("kv.fetch_gpu@1.0"));
        List<Map<String, Object>> ranks = new ArrayList<>();
        for (int r = 0; r < 2; r++) {
            ranks.add(Map.of("rank", r, "gpuOrdinal", firstGpu + r, "gpuUuid", "GPU-" + UUID.randomUUID()));
        }
        body.put("ranks", ranks);
        body.put("ready", ready);
        if (withBank) {
            List<Map<String, Object>> parts = new ArrayList<>();
            for (int r = 0; r < 2; r++) {
                parts.add(Map.of(
                        "rank",
                        r,
                        "regionRef",
                        "shm://bank-" + UUID.randomUUID(),
                        "bytesPerBlock",
                        1048576,
                        "ready",
                        true));
            }
            body.put("bank", Map.of("capacityBlocks", 64, "parts", parts));
        }
        return body;
    }
}
