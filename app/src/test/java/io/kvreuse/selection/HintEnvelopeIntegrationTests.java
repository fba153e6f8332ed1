package io.kvreuse.selection;

import static io.kvreuse.selection.SelectionTestSupport.assertNoHint;
import static io.kvreuse.selection.SelectionTestSupport.payload;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.bank.InventoryFeed;
import io.kvreuse.security.Role;
import io.kvreuse.support.Fleet;
import io.kvreuse.support.Fleet.Engine;
import io.kvreuse.support.IntegrationTest;
import io.kvreuse.support.ReuseSettingsFixture;
import io.kvreuse.support.TestTokens;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.MediaType;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.test.web.reactive.server.WebTestClient;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** The hint envelope: exact u64 hashes, the 64 KiB manifest bound, the CPU action, lineage. */
@IntegrationTest
class HintEnvelopeIntegrationTests {

    private static final JsonMapper exact = JsonMapper.builder()
            .enable(DeserializationFeature.USE_BIG_INTEGER_FOR_INTS)
            .build();

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

    @BeforeEach
    void setUp() {
        fleet = new Fleet(http, tokens);
        settings = new ReuseSettingsFixture(http, tokens.operator());
        settings.apply(ReuseSettingsFixture::permissive);
        s = new SelectionTestSupport(http, fleet, inventory, directory, db, tokens.mint(Role.ROUTER));
    }

    @AfterEach
    void restore() {
        settings.restore();
    }

    @Test
    void hashesAboveTwoToTheSixtyThreeTravelAsExactIntegersInsideTheEnvelope() {
        String domain = fleet.domain(1, "GPU_CUDA_IPC");
        String host = Fleet.host();
        long[] chain = Fleet.chain(8);
        chain[3] = -1L; // 18446744073709551615
        chain[4] = Long.MIN_VALUE; // 9223372036854775808
        s.donor(domain, 1, host, chain);
        Engine target = s.target(domain, 1, host);
        JsonNode answer = rawSelect(target.id(), chain, 0);
        JsonNode hashes =
                answer.path("hint").path("actions").get(0).path("payload").path("block_hashes");
        assertThat(hashes.size()).isEqualTo(8);
        for (int i = 0; i < 8; i++) {
            assertThat(hashes.get(i).isIntegralNumber()).isTrue();
            assertThat(hashes.get(i).bigIntegerValue()).isEqualTo(new BigInteger(Long.toUnsignedString(chain[i])));
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 4, 8})
    void aTenThousandBlockCoverageStillYieldsAManifestWithinSixtyFourKibibytes(int tp) {
        String domain = fleet.domain(tp, "GPU_CUDA_IPC");
        String host = Fleet.host();
        long[] chain = Fleet.chain(10_000);
        s.donor(domain, tp, host, chain);
        Engine target = s.target(domain, tp, host);
        String body = http.post()
                .uri("/api/v1/donor-selections")
                .header("Authorization", "Bearer " + s.router)
                .contentType(MediaType.APPLICATION_JSON)
                .bodyValue(request(target.id(), chain, 0, null))
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody(String.class)
                .returnResult()
                .getResponseBody();
        JsonNode answer = exact.readTree(body);
        assertThat(answer.path("decision").asString())
                .as(body.substring(0, Math.min(300, body.length())))
                .isEqualTo("HINT");
        JsonNode hint = answer.path("hint");
        int manifest = exact.writeValueAsString(hint).getBytes(StandardCharsets.UTF_8).length;
        assertThat(manifest).isLessThanOrEqualTo(64 * 1024);
        JsonNode payload = hint.path("actions").get(0).path("payload");
        int delta = payload.path("fetch_blocks").asInt();
        assertThat(delta).isLessThan(10_000).isGreaterThan(1000);
        assertThat(payload.path("block_hashes").size()).isEqualTo(delta);
        assertThat(payload.path("parts").size()).isEqualTo(tp);
        assertThat(answer.path("predicted").path("fetchBlocks").asInt()).isEqualTo(delta);
        for (int i = 0; i < delta; i++) {
            assertThat(payload.path("block_hashes").get(i).bigIntegerValue())
                    .isEqualTo(new BigInteger(Long.toUnsignedString(chain[i])));
        }
    }

    @Test
    void aCpuDomainGetsDynamosFetchActionInItsOwnEnvelope() {
        String domain = fleet.domain(1, "CPU_TP1");
        long[] chain = Fleet.chain(24);
        var donor = s.donor(domain, 1, Fleet.host(), chain);
        Engine target = s.target(domain, 1, Fleet.host());
        JsonNode answer = rawSelect(target.id(), chain, 4);
        assertThat(answer.path("decision").asString()).isEqualTo("HINT");
        JsonNode actions = answer.path("hint").path("actions");
        assertThat(actions.size()).isEqualTo(1);
        assertThat(actions.get(0).path("action_type").asString()).isEqualTo("kv.fetch");
        assertThat(actions.get(0).path("action_version").asString()).isEqualTo("1.0");
        JsonNode payload = actions.get(0).path("payload");
        assertThat(payload.propertyNames()).containsExactlyInAnyOrder("source_control_endpoint", "block_hashes");
        assertThat(payload.path("source_control_endpoint").asString())
                .isEqualTo("tcp://" + donor.engine().hostId() + ":5557");
        assertThat(payload.path("block_hashes").size())
                .as("root-aligned: h[0..L+Δ)")
                .isEqualTo(24);
    }

    @Test
    void blocksWithMultimodalLineageServeOnlyRequestsWithTheSameLineage() {
        String domain = fleet.domain(1, "GPU_CUDA_IPC");
        String host = Fleet.host();
        Engine decode = fleet.ready("DECODE", domain, 1, host);
        String bankId = fleet.bank(decode, 1, 64);
        long[] chain = Fleet.chain(12);
        List<Map<String, Object>> blocks = new ArrayList<>();
        for (int i = 0; i < chain.length; i++) {
            Map<String, Object> b = new LinkedHashMap<>();
            b.put("seqHash", Long.toUnsignedString(chain[i]));
            if (i > 0) {
                b.put("parentHash", Long.toUnsignedString(chain[i - 1]));
            }
            b.put("position", i);
            b.put("slot", i);
            if (i >= 6) {
                b.put("mmLineage", "sha256:image-a");
            }
            blocks.add(b);
        }
        fleet.post(
                "/api/v1/banks/" + bankId + "/events",
                decode.token(),
                Map.of("rank", 0, "firstEventId", 1, "events", List.of(Map.of("type", "STORED", "blocks", blocks))),
                200);
        s.awaitIndexed(bankId);
        s.awaitDirectory(decode.id());
        Engine target = s.target(domain, 1, host);

        assertThat(payload(s.select(target.id(), chain, 0)))
                .as("no lineage: coverage stops at the first image block")
                .containsEntry("fetch_blocks", 6);
        assertThat(payload(s.select(target.id(), chain, 0, "sha256:image-a", null)))
                .containsEntry("fetch_blocks", 12);
        assertThat(payload(s.select(target.id(), chain, 0, "sha256:image-b", null)))
                .containsEntry("fetch_blocks", 6);
        assertNoHint(s.select(target.id(), chain, 6, "sha256:image-b", null), NoHintReason.NO_COVERAGE);
    }

    private JsonNode rawSelect(String targetId, long[] chain, int local) {
        String body = http.post()
                .uri("/api/v1/donor-selections")
                .header("Authorization", "Bearer " + s.router)
                .contentType(MediaType.APPLICATION_JSON)
                .bodyValue(request(targetId, chain, local, null))
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody(String.class)
                .returnResult()
                .getResponseBody();
        return exact.readTree(body);
    }

    private static Map<String, Object> request(String targetId, long[] chain, int local, String lineage) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("requestId", "req-" + UUID.randomUUID());
        body.put("targetIncarnationId", targetId);
        List<String> hashes = new ArrayList<>(chain.length);
        for (long h : chain) {
            hashes.add(Long.toUnsignedString(h));
        }
        body.put("seqHashes", hashes);
        body.put("localPrefixBlocks", local);
        if (lineage != null) {
            body.put("mmLineage", lineage);
        }
        return body;
    }
}
