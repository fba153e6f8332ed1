package io.kvreuse.support;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.security.Role;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * A small fleet for lease tests, built through the real API: reuse enabled with short deadlines, a
 * READY decode donor whose published bank holds a chain, a READY prefill target on the same host,
 * and the host's node agent. {@link #propose()} asks for a selection and returns the PROPOSED lease.
 * Call {@link #restore()} after the test: settings are global to the shared database.
 */
public final class LeaseWorld {

    private static final ParameterizedTypeReference<Map<String, Object>> JSON = new ParameterizedTypeReference<>() {};
    private static final ParameterizedTypeReference<List<Map<String, Object>>> LIST =
            new ParameterizedTypeReference<>() {};

    public final Fleet fleet;
    public final WebTestClient http;
    public final TestTokens tokens;
    public final int tp;
    public final String host = Fleet.host();
    public final String domain;
    public final Fleet.Engine donor;
    public final Fleet.Engine target;
    public final String bankId;
    public final long[] chain;
    public final String agentToken;
    public long agentEpoch;
    private final Map<String, Object> originalSettings;

    public LeaseWorld(WebTestClient http, TestTokens tokens, int tp, long ttlMs, long transferMs, long abandonMs) {
        this.http = http;
        this.tokens = tokens;
        this.fleet = new Fleet(http, tokens);
        this.tp = tp;
        this.originalSettings = fleet.get("/api/v1/settings/reuse", tokens.operator());
        Map<String, Object> s = new LinkedHashMap<>(originalSettings);
        s.remove("version");
        s.put("enabled", true);
        s.put("minFetchBlocks", 1);
        s.put("minGainMs", 0);
        s.put("minGainRatio", 0);
        s.put("leaseTtlMs", ttlMs);
        s.put("transferDeadlineMs", transferMs);
        s.put("abandonDeadlineMs", abandonMs);
        s.put("maxInflightPerDonor", 100_000);
        s.put("maxInflightPerTarget", 100_000);
        put(s);
        this.domain = fleet.domain(tp, "GPU_CUDA_IPC");
        this.donor = fleet.ready("DECODE", domain, tp, host);
        this.target = fleet.ready("PREFILL", domain, tp, host);
        this.bankId = fleet.bank(donor, tp, 256);
        this.chain = Fleet.chain(8);
        long[] next = new long[tp];
        java.util.Arrays.fill(next, 1);
        fleet.storeChain(donor, bankId, tp, chain, 10, next);
        registerDestinationRegions(DESTINATION_CAPACITY).expectStatus().isOk();
        this.agentToken = tokens.mint(Role.AGENT, "agent-" + UUID.randomUUID(), host);
        this.agentEpoch = ((Number) registerAgent(agentToken, host).get("agentEpoch")).longValue();
    }

    public Map<String, Object> registerAgent(String token, String hostId) {
        List<Map<String, Object>> gpus = new ArrayList<>();
        List<Map<String, Object>> nixl = new ArrayList<>();
        for (int g = 0; g < 2 * tp + 2; g++) {
            gpus.add(Map.of("ordinal", g, "uuid", "GPU-" + UUID.randomUUID()));
            nixl.add(Map.of(
                    "gpuOrdinal",
                    g,
                    "name",
                    "agent-" + g,
                    "metadata",
                    Base64.getEncoder().encodeToString(("secret-md-" + g).getBytes())));
        }
        return http.post()
                .uri("/api/v1/agents")
                .header("Authorization", "Bearer " + token)
                .contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("hostId", hostId, "gpus", gpus, "nixlAgents", nixl))
                .exchange()
                .expectStatus()
                .value(st -> assertThat(st).isIn(200, 201))
                .expectBody(JSON)
                .returnResult()
                .getResponseBody();
    }

    public void restore() {
        Map<String, Object> s = new LinkedHashMap<>(originalSettings);
        s.remove("version");
        put(s);
    }

    private void put(Map<String, Object> doc) {
        http.put()
                .uri("/api/v1/settings/reuse")
                .header("Authorization", "Bearer " + tokens.operator())
                .contentType(MediaType.APPLICATION_JSON)
                .bodyValue(doc)
                .exchange()
                .expectStatus()
                .isOk();
    }

    /** A selection for the whole chain with nothing local; returns the PROPOSED lease id. */
    public String propose() {
        List<String> hashes =
                java.util.Arrays.stream(chain).mapToObj(Long::toUnsignedString).toList();
        String router = tokens.mint(Role.ROUTER);
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        Map<String, Object> last = Map.of();
        while (System.nanoTime() < deadline) {
            last = fleet.post(
                    "/api/v1/donor-selections",
                    router,
                    Map.of(
                            "requestId",
                            "req-" + UUID.randomUUID(),
                            "targetIncarnationId",
                            target.id(),
                            "seqHashes",
                            hashes,
                            "localPrefixBlocks",
                            0,
                            "deadlineMs",
                            2000),
                    200);
            if ("HINT".equals(last.get("decision"))) {
                return (String) last.get("leaseId");
            }
            sleep(50);
        }
        throw new AssertionError("no hint: " + last);
    }

    public Map<String, Object> lease(String id) {
        return fleet.get("/api/v1/leases/" + id, tokens.operator());
    }

    public String state(String id) {
        return (String) lease(id).get("state");
    }

    public List<Map<String, Object>> commands(Fleet.Engine e, long waitMs) {
        return http.get()
                .uri("/api/v1/incarnations/" + e.id() + "/commands?waitMs=" + waitMs)
                .header("Authorization", "Bearer " + e.token())
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody(LIST)
                .returnResult()
                .getResponseBody();
    }

    public long epoch(Fleet.Engine e) {
        return ((Number) fleet.get("/api/v1/incarnations/" + e.id(), e.token()).get("fencingEpoch")).longValue();
    }

    public WebTestClient.ResponseSpec ack(Fleet.Engine e, Object commandId, boolean ok, long epoch) {
        return fleet.postRaw(
                "/api/v1/incarnations/" + e.id() + "/commands/" + commandId + "/ack",
                e.token(),
                Map.of("ok", ok, "fencingEpoch", epoch));
    }

    /** Acknowledges every PIN of the lease that the donor has open. */
    public void pinAll(String leaseId) {
        long epoch = epoch(donor);
        for (Map<String, Object> c : commands(donor, 2000)) {
            if ("PIN".equals(c.get("type")) && leaseId.equals(c.get("leaseId"))) {
                ack(donor, c.get("commandId"), true, epoch).expectStatus().isOk();
            }
        }
    }

    /** Blocks of each destination region the target registers. */
    public static final int DESTINATION_CAPACITY = 4096;

    /** The target's region of {@code rank}, as {@link #destination} names it. */
    public String destinationRegion(int rank) {
        return "shm://dst-" + target.id() + "-" + rank;
    }

    /** Registers the target's destination regions, one per rank, of {@code capacity} blocks. */
    public WebTestClient.ResponseSpec registerDestinationRegions(int capacity) {
        List<Map<String, Object>> regions = new ArrayList<>();
        for (int r = 0; r < tp; r++) {
            regions.add(Map.of("rank", r, "regionRef", destinationRegion(r), "capacityBlocks", capacity));
        }
        return fleet.postRaw(
                "/api/v1/incarnations/" + target.id() + "/destination-regions",
                target.token(),
                Map.of("fencingEpoch", epoch(target), "regions", regions));
    }

    /** Destination slots {@code [start, fetch)} on every rank. */
    public WebTestClient.ResponseSpec destination(String leaseId, int start) {
        int fetch = ((Number) lease(leaseId).get("fetchBlocks")).intValue();
        List<Map<String, Object>> ranks = new ArrayList<>();
        for (int r = 0; r < tp; r++) {
            ranks.add(Map.of("rank", r, "regionRef", destinationRegion(r), "slots", List.of(List.of(start, fetch))));
        }
        return fleet.postRaw(
                "/api/v1/leases/" + leaseId + "/destination",
                target.token(),
                Map.of("fencingEpoch", epoch(target), "ranks", ranks));
    }

    public List<Map<String, Object>> orders(String token, String hostId, long waitMs) {
        return http.get()
                .uri("/api/v1/agents/" + hostId + "/orders?waitMs=" + waitMs)
                .header("Authorization", "Bearer " + token)
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody(LIST)
                .returnResult()
                .getResponseBody();
    }

    public WebTestClient.ResponseSpec part(Object orderId, int rank, String state, long bytes) {
        return fleet.postRaw(
                "/api/v1/orders/" + orderId + "/parts/" + rank,
                agentToken,
                Map.of("state", state, "bytes", bytes, "durationUs", 900, "fencingEpoch", agentEpoch));
    }

    /** Reports every part of the order in {@code state} with its full byte count. */
    public void allParts(Map<String, Object> order, String state) {
        for (Object p : (List<?>) order.get("parts")) {
            Map<?, ?> part = (Map<?, ?>) p;
            part(
                            order.get("orderId"),
                            ((Number) part.get("rank")).intValue(),
                            state,
                            ((Number) part.get("bytes")).longValue())
                    .expectStatus()
                    .isOk();
        }
    }

    public static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }
}
