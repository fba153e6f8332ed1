package io.kvreuse.support;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.security.Role;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * Builds test fleets through the real API: layout domains, engine incarnations with their own
 * tokens, and retained banks. Every name, host and model is unique to the calling test.
 */
public final class Fleet {

    private static final ParameterizedTypeReference<Map<String, Object>> JSON = new ParameterizedTypeReference<>() {};
    private static final Map<String, AtomicInteger> ordinals = new java.util.concurrent.ConcurrentHashMap<>();

    private final WebTestClient http;
    private final TestTokens tokens;

    public Fleet(WebTestClient http, TestTokens tokens) {
        this.http = http;
        this.tokens = tokens;
    }

    /** A certified contract unique to the caller: TP {@code tp}, the given transport, 1 MiB blocks per rank. */
    public String domain(int tp, String transport) {
        Map<String, Object> c = contract(tp, transport);
        Map<String, Object> body = post("/api/v1/domains", tokens.operator(), c, 201);
        return (String) body.get("domainId");
    }

    public static Map<String, Object> contract(int tp, String transport) {
        Map<String, Object> c = new LinkedHashMap<>();
        c.put("modelId", "test-model-" + UUID.randomUUID());
        c.put("modelRevision", "r1");
        c.put("tokenizerRevision", "t1");
        c.put("engine", "vllm");
        c.put("engineVersion", "0.11.0");
        c.put("dtype", "bfloat16");
        c.put("kvCacheDtype", "bfloat16");
        c.put("numLayers", 32);
        c.put("numKvHeads", 8);
        c.put("headDim", 128);
        c.put("attentionBackend", "FLASH_ATTN");
        c.put("blockSizeTokens", 16);
        c.put("hashFormat", "sha256-cbor-64:seed=0");
        c.put("memoryLayout", "LAYER_SEPARATE");
        c.put("kvLayout", "NHD");
        c.put("bytesPerBlockPerRank", 1048576);
        c.put("tpSize", tp);
        c.put("dpSize", 1);
        c.put("ppSize", 1);
        c.put("cpSize", 1);
        c.put("transportClass", transport);
        return c;
    }

    /** A registered engine incarnation with its own ENGINE token. */
    public record Engine(String id, String token, String hostId, String domainId) {}

    public Engine register(String role, String domainId, int tp, String hostId) {
        return register(role, domainId, tp, hostId, List.of("kv.fetch_gpu@1.0", "kv.fetch@1.0"));
    }

    public Engine register(String role, String domainId, int tp, String hostId, List<String> capabilities) {
        String token = tokens.mint(Role.ENGINE);
        List<Map<String, Object>> ranks = new ArrayList<>();
        for (int r = 0; r < tp; r++) {
            ranks.add(Map.of(
                    "rank",
                    r,
                    "gpuOrdinal",
                    ordinals.computeIfAbsent(hostId, h -> new AtomicInteger()).getAndIncrement(),
                    "gpuUuid",
                    "GPU-" + UUID.randomUUID()));
        }
        Map<String, Object> request = new LinkedHashMap<>();
        request.put("role", role);
        request.put("domainId", domainId);
        request.put("hostId", hostId);
        request.put("controlEndpoint", "tcp://" + hostId + ":5557");
        request.put("capabilities", capabilities);
        request.put("ranks", ranks);
        Map<String, Object> body = post("/api/v1/incarnations", token, request, 201);
        return new Engine((String) body.get("incarnationId"), token, hostId, domainId);
    }

    /** Registers and heartbeats once, so the incarnation is READY. */
    public Engine ready(String role, String domainId, int tp, String hostId) {
        Engine e = register(role, domainId, tp, hostId);
        heartbeat(e);
        return e;
    }

    public Map<String, Object> heartbeat(Engine e) {
        return post("/api/v1/incarnations/" + e.id() + "/heartbeat", e.token(), Map.of(), 200);
    }

    /** A bank with every part ready (published once its owner is READY). */
    public String bank(Engine decode, int tp, int capacity) {
        List<Map<String, Object>> parts = new ArrayList<>();
        for (int r = 0; r < tp; r++) {
            parts.add(Map.of("rank", r, "regionRef", "shm://bank-" + decode.id() + "-" + r, "bytesPerBlock", 1048576));
        }
        Map<String, Object> bank = post(
                "/api/v1/incarnations/" + decode.id() + "/banks",
                decode.token(),
                Map.of("capacityBlocks", capacity, "parts", parts),
                201);
        String bankId = (String) bank.get("bankId");
        for (int r = 0; r < tp; r++) {
            post("/api/v1/banks/" + bankId + "/parts/" + r + "/ready", decode.token(), Map.of(), 200);
        }
        return bankId;
    }

    /** Stores a root-aligned chain on every rank of a bank, blocks at slots {@code firstSlot..}. */
    public void storeChain(Engine decode, String bankId, int tp, long[] chain, int firstSlot, long[] nextEventIds) {
        for (int r = 0; r < tp; r++) {
            List<Map<String, Object>> blocks = new ArrayList<>();
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
            post(
                    "/api/v1/banks/" + bankId + "/events",
                    decode.token(),
                    Map.of(
                            "rank",
                            r,
                            "firstEventId",
                            nextEventIds[r],
                            "events",
                            List.of(Map.of("type", "STORED", "blocks", blocks))),
                    200);
            nextEventIds[r]++;
        }
    }

    public Map<String, Object> get(String path, String token) {
        return http.get()
                .uri(path)
                .header("Authorization", "Bearer " + token)
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody(JSON)
                .returnResult()
                .getResponseBody();
    }

    public Map<String, Object> post(String path, String token, Object body, int status) {
        Map<String, Object> response = http.post()
                .uri(path)
                .header("Authorization", "Bearer " + token)
                .contentType(MediaType.APPLICATION_JSON)
                .bodyValue(body)
                .exchange()
                .expectStatus()
                .value(s -> assertThat(s).as("POST " + path).isEqualTo(status))
                .expectBody(JSON)
                .returnResult()
                .getResponseBody();
        return response;
    }

    public WebTestClient.ResponseSpec postRaw(String path, String token, Object body) {
        return http.post()
                .uri(path)
                .header("Authorization", "Bearer " + token)
                .contentType(MediaType.APPLICATION_JSON)
                .bodyValue(body)
                .exchange();
    }

    /** A fresh chain of distinct random hashes (full 64-bit range, including ones above 2^63). */
    public static long[] chain(int length) {
        long[] h = new long[length];
        java.util.concurrent.ThreadLocalRandom r = java.util.concurrent.ThreadLocalRandom.current();
        for (int i = 0; i < length; i++) {
            h[i] = r.nextLong();
        }
        return h;
    }

    public static String host() {
        return "host-" + UUID.randomUUID();
    }
}
