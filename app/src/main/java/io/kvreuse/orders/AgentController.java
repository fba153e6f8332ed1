package io.kvreuse.orders;

import io.kvreuse.error.BatchResults;
import io.kvreuse.error.InvalidRequestException;
import io.kvreuse.error.ProblemType;
import io.kvreuse.lease.LongPoll;
import io.kvreuse.protocol.AgentRegistration;
import io.kvreuse.protocol.AgentView;
import io.kvreuse.protocol.PartReport;
import io.kvreuse.protocol.PartState;
import io.kvreuse.protocol.TransferOrder;
import io.kvreuse.protocol.UnfinishedOrder;
import io.kvreuse.security.CurrentPrincipal;
import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.responses.ApiResponse;
import jakarta.validation.Valid;
import java.net.URI;
import java.util.List;
import java.util.UUID;
import org.jspecify.annotations.Nullable;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/** Node agents (API.md "Node agents"): registration, heartbeats, the order long poll and part reports. */
@RestController
class AgentController {

    private final NodeAgents agents;
    private final TransferOrders orders;
    private final OrderPoll poll;

    AgentController(NodeAgents agents, TransferOrders orders, OrderPoll poll) {
        this.agents = agents;
        this.orders = orders;
        this.poll = poll;
    }

    /** 201 for a new host, 200 when its owner registers it again (a new agent epoch). */
    @ApiResponse(responseCode = "201", description = "the newly registered host's agent")
    @ApiResponse(responseCode = "200", description = "the host registered again by its owner, with a new agent epoch")
    @Operation(operationId = "registerAgent", summary = "Register a node agent for its host (AGENT)")
    @PostMapping("/api/v1/agents")
    Mono<ResponseEntity<AgentView>> register(@Valid @RequestBody AgentRegistration body) {
        return CurrentPrincipal.get()
                .flatMap(p -> agents.register(body, p))
                .map(r -> ResponseEntity.status(r.created() ? HttpStatus.CREATED : HttpStatus.OK)
                        .location(URI.create("/api/v1/agents/" + r.agent().hostId()))
                        .body(r.agent()));
    }

    @Operation(operationId = "heartbeatAgent", summary = "Heartbeat a node agent (AGENT)")
    @PostMapping("/api/v1/agents/{hostId}/heartbeat")
    Mono<AgentView> heartbeat(
            @PathVariable String hostId,
            @RequestBody(required = false) @Valid AgentRegistration.@Nullable Heartbeat body) {
        return CurrentPrincipal.get()
                .flatMap(p -> agents.heartbeat(hostId, body == null ? null : body.fencingEpoch(), p));
    }

    @Operation(operationId = "listAgents", summary = "List node agents (AGENT, OPERATOR)")
    @GetMapping("/api/v1/agents")
    Flux<AgentView> list() {
        return CurrentPrincipal.get().flatMapMany(agents::list);
    }

    @Operation(operationId = "getAgent", summary = "Read a node agent (AGENT, OPERATOR)")
    @GetMapping("/api/v1/agents/{hostId}")
    Mono<AgentView> get(@PathVariable String hostId) {
        return CurrentPrincipal.get().flatMap(p -> agents.get(hostId, p));
    }

    @Operation(
            operationId = "pollOrders",
            summary = "Long-poll the host's transfer orders; each is handed out once (AGENT)")
    @GetMapping("/api/v1/agents/{hostId}/orders")
    Mono<List<TransferOrder>> orders(
            @PathVariable String hostId, @RequestParam(required = false) @Nullable Long waitMs) {
        return CurrentPrincipal.get().flatMap(p -> poll.poll(hostId, LongPoll.waitOf(waitMs), p));
    }

    /** Claimed orders of the host whose parts are not final: what a restarted agent must settle first. */
    @Operation(
            operationId = "unfinishedOrders",
            summary = "List the host's claimed orders with unfinished parts (AGENT)")
    @GetMapping("/api/v1/agents/{hostId}/orders/unfinished")
    Mono<List<UnfinishedOrder>> unfinished(@PathVariable String hostId) {
        return CurrentPrincipal.get().flatMap(p -> orders.unfinished(hostId, p));
    }

    @Operation(operationId = "reportPart", summary = "Report one part's progress (AGENT)")
    @PostMapping("/api/v1/orders/{orderId}/parts/{rank}")
    Mono<PartReport.Ack> part(@PathVariable UUID orderId, @PathVariable int rank, @Valid @RequestBody PartReport body) {
        reported(body.state(), "state");
        return CurrentPrincipal.get().flatMap(p -> orders.report(orderId, rank, body, p));
    }

    /** Part reports of many orders; each item as {@code POST /orders/{orderId}/parts/{rank}} would. */
    @Operation(operationId = "reportParts", summary = "Report many parts' progress at once (AGENT)")
    @PostMapping("/api/v1/agents/{hostId}/parts")
    Mono<BatchResults<PartReport.Ack>> parts(@PathVariable String hostId, @Valid @RequestBody PartReport.Batch body) {
        for (int i = 0; i < body.reports().size(); i++) {
            reported(body.reports().get(i).state(), "reports[" + i + "].state");
        }
        return CurrentPrincipal.get()
                .flatMap(p -> orders.reports(hostId, body, p))
                .map(BatchResults::new);
    }

    /**
     * QUEUED is the control plane's name for a part no report reached yet, never a report: it is
     * refused as the unknown value it is on the wire.
     */
    private static void reported(PartState state, String field) {
        if (!state.isReportable()) {
            throw new InvalidRequestException(
                    ProblemType.MALFORMED_REQUEST, "field '" + field + "' has an invalid value '" + state + "'");
        }
    }
}
