package io.kvreuse.agent.kvevents;

import io.kvreuse.protocol.KvEventSource;
import io.kvreuse.protocol.StreamBreak;
import io.kvreuse.protocol.WireProblem;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** {@link InventoryFeed} over the JDK HTTP client, with the host's AGENT token. */
public final class HttpInventoryFeed implements InventoryFeed {

    /** One client for every stream of the agent: its connections are kept and reused. */
    private final HttpClient http = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1) // plain http: no h2c upgrade offered on every new connection
            .connectTimeout(Duration.ofSeconds(5))
            .build();

    private final JsonMapper json = JsonMapper.builder()
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .build();
    private final URI base;
    private final String token;
    private final String hostId;

    public HttpInventoryFeed(URI controlPlane, String token, String hostId) {
        this.base = controlPlane;
        this.token = token;
        this.hostId = hostId;
    }

    @Override
    public List<KvEventSource> sources() throws FeedException {
        JsonNode body =
                send(request("/api/v1/agents/" + hostId + "/event-sources").GET(), "event sources");
        return List.of(json.treeToValue(body, KvEventSource[].class));
    }

    @Override
    public long post(UUID bankId, int rank, long firstEventId, List<byte[]> events, @Nullable Long sourceSequence)
            throws FeedException {
        byte[] body = EventJson.batch(rank, firstEventId, events, sourceSequence);
        HttpRequest.Builder request = request("/api/v1/banks/" + bankId + "/events")
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofByteArray(body));
        return send(request, "events").path("appliedThroughEventId").asLong();
    }

    @Override
    public void streamBroke(UUID bankId, int rank, StreamBreak report) throws FeedException {
        send(post("/api/v1/banks/" + bankId + "/parts/" + rank + "/stream-breaks", report), "stream break");
    }

    @Override
    public void reset(UUID bankId, long ifEpoch) throws FeedException {
        send(post("/api/v1/banks/" + bankId + "/reset?ifEpoch=" + ifEpoch, java.util.Map.of()), "reset");
    }

    private HttpRequest.Builder request(String path) {
        return HttpRequest.newBuilder(base.resolve(path))
                .timeout(Duration.ofSeconds(30))
                .header("Authorization", "Bearer " + token)
                .header("Accept", "application/json");
    }

    private HttpRequest.Builder post(String path, Object body) {
        return request(path)
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofByteArray(json.writeValueAsBytes(body)));
    }

    private JsonNode send(HttpRequest.Builder request, String call) throws FeedException {
        HttpResponse<byte[]> response;
        try {
            response = http.send(request.build(), HttpResponse.BodyHandlers.ofByteArray());
        } catch (IOException e) {
            throw new FeedException(0, "", call + ": " + e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new FeedException(0, "", call + ": interrupted");
        }
        JsonNode body;
        try {
            body = response.body().length == 0 ? json.createObjectNode() : json.readTree(response.body());
        } catch (RuntimeException notJson) {
            body = json.createObjectNode();
        }
        if (response.statusCode() >= 400) {
            String type = body.path("type").asString("");
            throw new FeedException(
                    response.statusCode(),
                    WireProblem.slugOf(type),
                    call + " -> " + response.statusCode() + " "
                            + body.path("detail").asString(""));
        }
        return body;
    }
}
