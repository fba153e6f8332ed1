package io.kvreuse.sim;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * JSON over HTTP as an engine speaks it, with one bearer token. Counts the request-body bytes it
 * sends, so a test can show that no KV payload went through the control plane.
 */
public final class SimHttp {

    static final JsonMapper JSON = JsonMapper.builder().build();

    private final HttpClient client =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final String baseUrl;
    private final String token;
    private final AtomicLong bytesSent;

    public SimHttp(String baseUrl, String token, AtomicLong bytesSent) {
        this.baseUrl = baseUrl;
        this.token = token;
        this.bytesSent = bytesSent;
    }

    /** The status and JSON body of one call. */
    public record Response(int status, JsonNode body) {
        public Response expect(int expected, String call) {
            if (status != expected) {
                throw new SimEngineException(call + " -> " + status + " " + body);
            }
            return this;
        }
    }

    public Response get(String path, Duration timeout) {
        return send(HttpRequest.newBuilder(URI.create(baseUrl + path)).GET(), timeout);
    }

    public Response post(String path, @Nullable Object body) {
        byte[] bytes = JSON.writeValueAsBytes(body == null ? java.util.Map.of() : body);
        bytesSent.addAndGet(bytes.length);
        return send(
                HttpRequest.newBuilder(URI.create(baseUrl + path))
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofByteArray(bytes)),
                Duration.ofSeconds(30));
    }

    public Response put(String path, Object body) {
        byte[] bytes = JSON.writeValueAsBytes(body);
        bytesSent.addAndGet(bytes.length);
        return send(
                HttpRequest.newBuilder(URI.create(baseUrl + path))
                        .header("Content-Type", "application/json")
                        .PUT(HttpRequest.BodyPublishers.ofByteArray(bytes)),
                Duration.ofSeconds(30));
    }

    /** A GET whose answer is text, not JSON (e.g. {@code /actuator/prometheus}); throws unless 200. */
    public String getText(String path, Duration timeout) {
        HttpRequest request = HttpRequest.newBuilder(URI.create(baseUrl + path))
                .header("Authorization", "Bearer " + token)
                .timeout(timeout)
                .GET()
                .build();
        try {
            HttpResponse<String> r = client.send(request, HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() != 200) {
                throw new SimEngineException("GET " + path + " -> " + r.statusCode());
            }
            return r.body();
        } catch (IOException e) {
            throw new SimEngineException("HTTP call failed: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SimEngineException("interrupted", e);
        }
    }

    private Response send(HttpRequest.Builder request, Duration timeout) {
        request.header("Authorization", "Bearer " + token).timeout(timeout);
        try {
            HttpResponse<byte[]> r = client.send(request.build(), HttpResponse.BodyHandlers.ofByteArray());
            JsonNode body = r.body().length == 0 ? JSON.createObjectNode() : JSON.readTree(r.body());
            return new Response(r.statusCode(), body);
        } catch (IOException e) {
            throw new SimEngineException("HTTP call failed: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SimEngineException("interrupted", e);
        }
    }
}
