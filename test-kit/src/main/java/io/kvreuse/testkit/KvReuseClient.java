package io.kvreuse.testkit;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * A client of the kvreuse HTTP API as a router, engine, agent or operator uses it: JSON over
 * HTTP/1.1 with the JDK client, one bearer token (or one per call), problem answers read as
 * {@link Problem}. The generic calls answer whatever came back ({@link Answer}); the typed calls
 * expect their documented success status and throw {@link ApiCallException} otherwise. A failed
 * exchange (refused, reset, timed out) also throws {@link ApiCallException}.
 *
 * <p>Clients made with {@link #as(String)} share one connection pool. With {@link
 * #countingSentBytes(AtomicLong)} the request-body bytes sent are counted, so a test can show that
 * no KV payload went through the control plane.
 */
public final class KvReuseClient {

    /** The JSON mapper every user of the kit shares. */
    public static final JsonMapper JSON = Json.MAPPER;

    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    /*
     * The clients' own threads: by default HttpClient completes sendAsync futures in
     * ForkJoinPool.commonPool(), which has one worker on two cores; a caller blocked there (a test
     * engine running a property) would starve every response delivery.
     */
    private static final ExecutorService EXECUTOR = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "kvreuse-client");
        t.setDaemon(true);
        return t;
    });

    private final HttpClient client;
    private final String baseUrl;
    private final String token;
    private final AtomicLong sentBytes;

    /** A client without a token (add one per call or with {@link #as(String)}). */
    public KvReuseClient(String baseUrl) {
        this(baseUrl, null);
    }

    public KvReuseClient(String baseUrl, String token) {
        this(
                HttpClient.newBuilder()
                        .version(HttpClient.Version.HTTP_1_1)
                        .connectTimeout(Duration.ofSeconds(5))
                        .executor(EXECUTOR)
                        .build(),
                baseUrl,
                token,
                null);
    }

    private KvReuseClient(HttpClient client, String baseUrl, String token, AtomicLong sentBytes) {
        this.client = client;
        this.baseUrl = baseUrl;
        this.token = token;
        this.sentBytes = sentBytes;
    }

    /** The same server and connections, calling with {@code token}. */
    public KvReuseClient as(String token) {
        return new KvReuseClient(client, baseUrl, token, sentBytes);
    }

    /** The same client, adding the bytes of every request body it sends to {@code counter}. */
    public KvReuseClient countingSentBytes(AtomicLong counter) {
        return new KvReuseClient(client, baseUrl, token, counter);
    }

    public String baseUrl() {
        return baseUrl;
    }

    /** The bearer token of this client; null without one. */
    public String token() {
        return token;
    }

    // ---- generic calls: whatever the server answered

    public Answer get(String path) {
        return send("GET", path, token, null, TIMEOUT);
    }

    public Answer get(String path, Duration timeout) {
        return send("GET", path, token, null, timeout);
    }

    public Answer get(String path, String token) {
        return send("GET", path, token, null, TIMEOUT);
    }

    /** POST with a JSON body: a {@code String} or {@code byte[]} is sent as it is, anything else as JSON. */
    public Answer post(String path, Object body) {
        return send("POST", path, token, body == null ? Map.of() : body, TIMEOUT);
    }

    public Answer post(String path, String token, Object body) {
        return send("POST", path, token, body == null ? Map.of() : body, TIMEOUT);
    }

    public Answer put(String path, Object body) {
        return send("PUT", path, token, body, TIMEOUT);
    }

    public Answer put(String path, String token, Object body) {
        return send("PUT", path, token, body, TIMEOUT);
    }

    public Answer delete(String path) {
        return send("DELETE", path, token, null, TIMEOUT);
    }

    /** One call; {@code token} and {@code body} may be null. */
    public Answer send(String method, String path, String token, Object body, Duration timeout) {
        return exchange(request(method, path, token, body, timeout));
    }

    /** One call that must answer {@code expected}; its JSON body (an empty body reads as an empty object). */
    public JsonNode send(String method, String path, String token, Object body, int expected) {
        return send(method, path, token, body, TIMEOUT).expectJson(expected);
    }

    /** A GET answered with text (e.g. {@code /actuator/prometheus}); throws unless 200. */
    public String getText(String path, Duration timeout) {
        return get(path, timeout).expect(200).body();
    }

    /** The request {@link #send} would make, for load generators that send asynchronously. */
    public HttpRequest request(String method, String path, String token, Object body) {
        return request(method, path, token, body, TIMEOUT);
    }

    public CompletableFuture<HttpResponse<String>> sendAsync(HttpRequest request) {
        return client.sendAsync(request, HttpResponse.BodyHandlers.ofString());
    }

    /**
     * Exactly this request, for callers that send requests as wrong as they like (the API fuzzer):
     * any method, only the given headers (no token, no content type added), the body bytes as they
     * are (null for none).
     */
    public HttpRequest rawRequest(
            String method, String path, Map<String, String> headers, byte[] body, Duration timeout) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(baseUrl + path))
                .timeout(timeout)
                .method(
                        method,
                        body == null
                                ? HttpRequest.BodyPublishers.noBody()
                                : HttpRequest.BodyPublishers.ofByteArray(body));
        headers.forEach(b::header);
        return b.build();
    }

    /** Sends a request made by {@link #request} or {@link #rawRequest}; what came back. */
    public Answer exchange(HttpRequest request) {
        String call = request.method() + " " + request.uri().getRawPath();
        try {
            HttpResponse<String> r = client.send(request, HttpResponse.BodyHandlers.ofString());
            return answer(r);
        } catch (IOException e) {
            throw new ApiCallException(call + " failed: " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ApiCallException(call + " interrupted", e);
        }
    }

    /** What an asynchronously sent request got back. */
    public static Answer answer(HttpResponse<String> r) {
        return new Answer(
                r.request().method() + " " + r.request().uri().getRawPath(),
                r.statusCode(),
                r.headers().firstValue("Content-Type").orElse(""),
                r.body() == null ? "" : r.body());
    }

    private HttpRequest request(String method, String path, String token, Object body, Duration timeout) {
        HttpRequest.Builder b =
                HttpRequest.newBuilder(URI.create(baseUrl + path)).timeout(timeout);
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        if (body == null) {
            return b.method(method, HttpRequest.BodyPublishers.noBody()).build();
        }
        byte[] bytes = bytes(body);
        if (sentBytes != null) {
            sentBytes.addAndGet(bytes.length);
        }
        return b.header("Content-Type", "application/json")
                .method(method, HttpRequest.BodyPublishers.ofByteArray(bytes))
                .build();
    }

    private static byte[] bytes(Object body) {
        if (body instanceof byte[] raw) {
            return raw;
        }
        if (body instanceof String text) {
            return text.getBytes(StandardCharsets.UTF_8);
        }
        return JSON.writeValueAsBytes(body);
    }

    // ---- typed calls with this client's token: the documented success status or ApiCallException

    /** Certifies a layout contract (OPERATOR); the new domain's id. */
    public String certify(Map<String, ?> contract) {
        return post("/api/v1/domains", contract).expectJson(201).get("domainId").asString();
    }

    /** Mints a token (OPERATOR) of {@code role} for {@code subject}, bound or scoped to {@code hostId} if not null. */
    public String mint(String role, String subject, String hostId) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("role", role);
        body.put("subject", subject);
        if (hostId != null) {
            body.put("hostId", hostId);
        }
        return post("/api/v1/tokens", body).expectJson(201).get("token").asString();
    }

    /** Registers an engine incarnation (ENGINE); the answer (incarnationId, fencingEpoch, state…). */
    public JsonNode register(Map<String, ?> registration) {
        return post("/api/v1/incarnations", registration).expectJson(201);
    }

    public JsonNode heartbeat(String incarnationId) {
        return post("/api/v1/incarnations/" + incarnationId + "/heartbeat", Map.of())
                .expectJson(200);
    }

    /** Creates a retained bank (ENGINE); its id. */
    public String createBank(String incarnationId, int capacityBlocks, List<Map<String, Object>> parts) {
        return post("/api/v1/incarnations/" + incarnationId + "/banks", Requests.bank(capacityBlocks, parts))
                .expectJson(201)
                .get("bankId")
                .asString();
    }

    public JsonNode partReady(String bankId, int rank) {
        return post("/api/v1/banks/" + bankId + "/parts/" + rank + "/ready", Map.of())
                .expectJson(200);
    }

    /** One inventory batch of a bank part, e.g. {@link Requests#events}. */
    public JsonNode events(String bankId, Map<String, ?> batch) {
        return post("/api/v1/banks/" + bankId + "/events", batch).expectJson(200);
    }

    /** A donor selection (ROUTER): HINT with a lease, or NO_HINT with a reason. */
    public JsonNode select(Map<String, ?> request) {
        return post("/api/v1/donor-selections", request).expectJson(200);
    }

    public JsonNode destination(String leaseId, long fencingEpoch, List<?> ranks) {
        return post("/api/v1/leases/" + leaseId + "/destination", Map.of("fencingEpoch", fencingEpoch, "ranks", ranks))
                .expectJson(200);
    }

    public JsonNode commit(String leaseId, long fencingEpoch, int committedBlocks) {
        return post(
                        "/api/v1/leases/" + leaseId + "/commit",
                        Map.of("fencingEpoch", fencingEpoch, "committedBlocks", committedBlocks))
                .expectJson(200);
    }

    public JsonNode lease(String leaseId) {
        return get("/api/v1/leases/" + leaseId).expectJson(200);
    }

    /** The incarnation's pending commands (long poll of at most {@code waitMs}). */
    public JsonNode commands(String incarnationId, int waitMs) {
        return get(
                        "/api/v1/incarnations/" + incarnationId + "/commands?waitMs=" + waitMs,
                        Duration.ofMillis(waitMs + 30_000L))
                .expectJson(200);
    }

    public JsonNode ack(String incarnationId, String commandId, Map<String, ?> body) {
        return post("/api/v1/incarnations/" + incarnationId + "/commands/" + commandId + "/ack", body)
                .expectJson(200);
    }

    /** Registers a node agent (AGENT), e.g. {@link Requests#agent}; the answer (agentEpoch…). */
    public JsonNode registerAgent(Map<String, ?> registration) {
        return post("/api/v1/agents", registration).expectJson(201);
    }

    /** The host's transfer orders (long poll of at most {@code waitMs}). */
    public JsonNode orders(String hostId, int waitMs) {
        return get("/api/v1/agents/" + hostId + "/orders?waitMs=" + waitMs, Duration.ofMillis(waitMs + 30_000L))
                .expectJson(200);
    }

    public JsonNode reportPart(String orderId, int rank, Map<String, ?> report) {
        return post("/api/v1/orders/" + orderId + "/parts/" + rank, report).expectJson(200);
    }

    /** The reuse settings document without its {@code version}, ready to change and put back. */
    public Map<String, Object> reuseSettings() {
        @SuppressWarnings("unchecked")
        Map<String, Object> doc =
                JSON.convertValue(get("/api/v1/settings/reuse").expectJson(200), LinkedHashMap.class);
        doc.remove("version");
        return doc;
    }

    /** Reads the reuse settings, applies {@code changes} and puts them back (OPERATOR); the new document. */
    public JsonNode changeReuseSettings(Map<String, ?> changes) {
        Map<String, Object> doc = reuseSettings();
        doc.putAll(changes);
        return put("/api/v1/settings/reuse", doc).expectJson(200);
    }
}
