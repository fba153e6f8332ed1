package io.kvreuse.agent;

import io.kvreuse.protocol.AgentRegistration;
import io.kvreuse.protocol.AgentView;
import io.kvreuse.protocol.PartReport;
import io.kvreuse.protocol.TransferOrder;
import io.kvreuse.protocol.UnfinishedOrder;
import io.kvreuse.protocol.WireProblem;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.publisher.Mono;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The agent's side of API.md "Node agents", over WebClient. Bodies are serialised here so the bytes
 * the agent sends to the control plane can be counted: they must stay metadata-sized, whatever the
 * transfers move. NIXL metadata appears in the registration body only, which is never logged.
 */
final class ControlPlaneClient {

    private final WebClient http;
    private final JsonMapper json = JsonMapper.builder()
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .build();
    private final AtomicLong bytesSent = new AtomicLong();
    private final Duration pollWait;

    ControlPlaneClient(WebClient.Builder builder, AgentProperties props) {
        this.http = builder.baseUrl(props.controlPlane().toString())
                .defaultHeader(HttpHeaders.AUTHORIZATION, "Bearer " + props.token())
                .build();
        this.pollWait = props.pollWait();
    }

    /** Registers (again) and answers the new agent epoch. */
    Mono<Long> register(AgentRegistration registration) {
        return post("/api/v1/agents", registration, "register")
                .map(body -> json.treeToValue(body, AgentView.class).agentEpoch())
                .timeout(Duration.ofSeconds(30));
    }

    Mono<Void> heartbeat(String hostId, long epoch) {
        return post("/api/v1/agents/" + hostId + "/heartbeat", new AgentRegistration.Heartbeat(epoch), "heartbeat")
                .timeout(Duration.ofSeconds(10))
                .then();
    }

    /** One long poll: the orders handed to this host, empty when none arrived within the poll wait. */
    Mono<List<TransferOrder>> orders(String hostId) {
        return http.get()
                .uri(u -> u.path("/api/v1/agents/{host}/orders")
                        .queryParam("waitMs", pollWait.toMillis())
                        .build(hostId))
                .exchangeToMono(r -> read(r, "orders"))
                .map(body -> List.of(json.treeToValue(body, TransferOrder[].class)))
                .timeout(pollWait.plusSeconds(15));
    }

    /** Claimed orders of the host whose parts are not final, as the control plane last heard of them. */
    Mono<List<UnfinishedOrder>> unfinishedOrders(String hostId) {
        return http.get()
                .uri("/api/v1/agents/{host}/orders/unfinished", hostId)
                .exchangeToMono(r -> read(r, "unfinished orders"))
                .map(body -> List.of(json.treeToValue(body, UnfinishedOrder[].class)))
                .timeout(Duration.ofSeconds(30));
    }

    /**
     * Completes once the control plane acknowledged the report: a 2xx answer that names the part.
     * Anything else that came back with a 2xx (an empty body, another part) acknowledges nothing and
     * fails, so the report is sent again; a report acknowledged twice changes nothing.
     */
    Mono<Void> report(UUID orderId, int rank, PartReport report) {
        return post("/api/v1/orders/" + orderId + "/parts/" + rank, report, "report " + report.state())
                .timeout(Duration.ofSeconds(15))
                .flatMap(body -> {
                    if (orderId.toString().equals(body.path("orderId").asString(""))
                            && body.path("rank").isIntegralNumber()
                            && body.path("rank").asInt() == rank) {
                        return Mono.<Void>empty();
                    }
                    return Mono.error(new UnacknowledgedReportException("report " + report.state() + " of order "
                            + orderId + " rank " + rank + " answered without an acknowledgement: "
                            + abbreviate(body.toString())));
                });
    }

    /** A 2xx answer to a report that does not acknowledge it: the report was not heard, as far as the agent can tell. */
    static final class UnacknowledgedReportException extends RuntimeException {
        UnacknowledgedReportException(String message) {
            super(message, null, false, false);
        }
    }

    private static String abbreviate(String s) {
        return s.length() <= 200 ? s : s.substring(0, 197) + "...";
    }

    /** Bytes of every request body sent so far. */
    long bytesSent() {
        return bytesSent.get();
    }

    private Mono<JsonNode> post(String path, Object body, String call) {
        return Mono.fromCallable(() -> json.writeValueAsBytes(body)).flatMap(bytes -> {
            bytesSent.addAndGet(bytes.length);
            return http.post()
                    .uri(path)
                    .contentType(MediaType.APPLICATION_JSON)
                    .bodyValue(bytes)
                    .exchangeToMono(r -> read(r, call));
        });
    }

    private Mono<JsonNode> read(ClientResponse response, String call) {
        return response.bodyToMono(byte[].class).defaultIfEmpty(new byte[0]).map(bytes -> {
            JsonNode body = bytes.length == 0 ? json.createObjectNode() : parse(bytes);
            if (response.statusCode().isError()) {
                String type = body.path("type").asString("");
                throw new ControlPlaneException(
                        call,
                        response.statusCode().value(),
                        WireProblem.slugOf(type),
                        body.path("detail").asString(""));
            }
            return body;
        });
    }

    private JsonNode parse(byte[] bytes) {
        try {
            return json.readTree(bytes);
        } catch (RuntimeException notJson) {
            return json.createObjectNode();
        }
    }
}
