package io.kvreuse.support;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.security.Role;
import io.kvreuse.testkit.Requests;
import io.kvreuse.testkit.SampleContracts;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * Builds test fleets through the real API: layout domains, engine incarnations with their own
 * tokens, and retained banks, with the request bodies and sample contract of the test kit. Every
 * name, host and model is unique to the calling test.
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

    /** The kit's sample contract under a unique model id, at TP {@code tp} over {@code transport}. */
    public static Map<String, Object> contract(int tp, String transport) {
        return SampleContracts.unique("test-model", tp, transport);
    }

    /** A registered engine incarnation with its own ENGINE token. */
    public record Engine(String id, String token, String hostId, String domainId) {}

    public Engine register(String role, String domainId, int tp, String hostId) {
        return register(role, domainId, tp, hostId, Requests.GPU_FETCH);
    }

    public Engine register(String role, String domainId, int tp, String hostId, List<String> capabilities) {
        String token = tokens.mint(Role.ENGINE);
        List<Map<String, Object>> ranks = new ArrayList<>();
        for (int r = 0; r < tp; r++) {
            ranks.add(Requests.rank(
                    r,
                    ordinals.computeIfAbsent(hostId, h -> new AtomicInteger()).getAndIncrement()));
        }
        Map<String, Object> request = Requests.registration(role, domainId, hostId, capabilities, ranks);
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
        List<Map<String, Object>> parts = Requests.bankParts(tp, "bank-" + decode.id(), 1048576);
        Map<String, Object> bank = post(
                "/api/v1/incarnations/" + decode.id() + "/banks", decode.token(), Requests.bank(capacity, parts), 201);
        String bankId = (String) bank.get("bankId");
        for (int r = 0; r < tp; r++) {
            post("/api/v1/banks/" + bankId + "/parts/" + r + "/ready", decode.token(), Map.of(), 200);
        }
        return bankId;
    }

    /** Stores a root-aligned chain on every rank of a bank, blocks at slots {@code firstSlot..}. */
    public void storeChain(Engine decode, String bankId, int tp, long[] chain, int firstSlot, long[] nextEventIds) {
        for (int r = 0; r < tp; r++) {
            post(
                    "/api/v1/banks/" + bankId + "/events",
                    decode.token(),
                    Requests.events(r, nextEventIds[r], List.of(Requests.stored(chain, firstSlot))),
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

    /** A fresh chain of random hashes (full 64-bit range, including ones above 2^63). */
    public static long[] chain(int length) {
        return Requests.randomChain(length);
    }

    public static String host() {
        return Requests.host();
    }
}
