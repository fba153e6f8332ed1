package io.kvreuse.orders;

import io.kvreuse.error.BatchResults;
import io.kvreuse.error.InvalidRequestException;
import io.kvreuse.error.ProblemResponse;
import io.kvreuse.error.ProblemType;
import io.kvreuse.protocol.AgentRegistration;
import io.kvreuse.protocol.AgentView;
import io.kvreuse.protocol.PartReport;
import io.kvreuse.protocol.PartState;
import io.kvreuse.protocol.TransferOrder;
import io.kvreuse.protocol.UnfinishedOrder;
import io.kvreuse.security.CurrentPrincipal;
import io.kvreuse.store.LongPoll;
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
    @ProblemResponse(
            value = {ProblemType.INVALID_REQUEST, ProblemType.MALFORMED_REQUEST},
            note = "also for duplicate GPU ordinals, a NIXL agent of no listed GPU or two of one GPU, metadata that"
                    + " is not base64")
    @ProblemResponse(
            value = {ProblemType.TOKEN_HOST_MISMATCH, ProblemType.NOT_HOST_OWNER},
            note = "an AGENT token of another host; a host registered to another agent subject")
    @Operation(operationId = "registerAgent", summary = "Register a node agent for its host (AGENT)")
    @PostMapping("/api/v1/agents")
    Mono<ResponseEntity<AgentView>> register(@Valid @RequestBody AgentRegistration body) {
        return CurrentPrincipal.get()
                .flatMap(p -> agents.register(body, p))
                .map(r -> ResponseEntity.status(r.created() ? HttpStatus.CREATED : HttpStatus.OK)
                        .location(URI.create("/api/v1/agents/" + r.agent().hostId()))
                        .body(r.agent()));
    }

    @ProblemResponse(
            value = {ProblemType.INVALID_REQUEST, ProblemType.MALFORMED_REQUEST},
            note = "a fencingEpoch below 1 or not an integer")
    @ProblemResponse(
            value = {ProblemType.TOKEN_HOST_MISMATCH, ProblemType.NOT_HOST_OWNER},
            note = "an AGENT token of another host; a host registered to another agent subject")
    @ProblemResponse(
            value = {ProblemType.NO_SUCH_AGENT},
            note = "no agent registered for the host")
    @ProblemResponse(
            value = {ProblemType.STALE_EPOCH},
            note = "a fencingEpoch other than the agent's current one")
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

    @ProblemResponse(
            value = {ProblemType.TOKEN_HOST_MISMATCH, ProblemType.NOT_HOST_OWNER},
            note = "an AGENT token of another host; a host registered to another agent subject")
    @ProblemResponse(
            value = {ProblemType.NO_SUCH_AGENT},
            note = "no agent registered for the host")
    @Operation(operationId = "getAgent", summary = "Read a node agent (AGENT, OPERATOR)")
    @GetMapping("/api/v1/agents/{hostId}")
    Mono<AgentView> get(@PathVariable String hostId) {
        return CurrentPrincipal.get().flatMap(p -> agents.get(hostId, p));
    }

    @ProblemResponse(
            value = {ProblemType.INVALID_PARAMETER},
            note = "waitMs below 0 or not an integer")
    @ProblemResponse(
            value = {ProblemType.TOKEN_HOST_MISMATCH, ProblemType.NOT_HOST_OWNER},
            note = "an AGENT token of another host; a host registered to another agent subject")
    @ProblemResponse(
            value = {ProblemType.NO_SUCH_AGENT},
            note = "no agent registered for the host")
    @Operation(
            operationId = "pollOrders",
            summary = "Long-poll the host's transfer orders; each is handed out once (AGENT)")
    @GetMapping("/api/v1/agents/{hostId}/orders")
    Mono<List<TransferOrder>> orders(
            @PathVariable String hostId, @RequestParam(required = false) @Nullable Long waitMs) {
        return CurrentPrincipal.get().flatMap(p -> poll.poll(hostId, LongPoll.waitOf(waitMs), p));
    }

    /** Claimed orders of the host whose parts are not final: what a restarted agent must settle first. */
    @ProblemResponse(
            value = {ProblemType.TOKEN_HOST_MISMATCH, ProblemType.NOT_HOST_OWNER},
            note = "an AGENT token of another host; a host registered to another agent subject")
    @ProblemResponse(
            value = {ProblemType.NO_SUCH_AGENT},
            note = "no agent registered for the host")
    @Operation(
            operationId = "unfinishedOrders",
            summary = "List the host's claimed orders with unfinished parts (AGENT)")
    @GetMapping("/api/v1/agents/{hostId}/orders/unfinished")
    Mono<List<UnfinishedOrder>> unfinished(@PathVariable String hostId) {
        return CurrentPrincipal.get().flatMap(p -> orders.unfinished(hostId, p));
    }

    @ProblemResponse(
            value = {ProblemType.INVALID_REQUEST, ProblemType.MALFORMED_REQUEST, ProblemType.INVALID_PARAMETER},
            note = "also for bytes beyond the part's and a QUEUED state; a malformed orderId or rank is an invalid"
                    + " parameter")
    @ProblemResponse(
            value = {ProblemType.TOKEN_HOST_MISMATCH, ProblemType.NOT_HOST_OWNER},
            note = "the token acts for neither end's host")
    @ProblemResponse(
            value = {ProblemType.NO_SUCH_ORDER, ProblemType.NO_SUCH_PART, ProblemType.NO_SUCH_AGENT},
            note = "an order without that rank; no agent registered for the host")
    @ProblemResponse(
            value = {ProblemType.STALE_EPOCH, ProblemType.PART_FINAL},
            note = "a part already final in another state (the same state again is acknowledged)")
    @Operation(operationId = "reportPart", summary = "Report one part's progress (AGENT)")
    @PostMapping("/api/v1/orders/{orderId}/parts/{rank}")
    Mono<PartReport.Ack> part(@PathVariable UUID orderId, @PathVariable int rank, @Valid @RequestBody PartReport body) {
        reported(body.state(), "state");
        return CurrentPrincipal.get().flatMap(p -> orders.report(orderId, rank, body, p));
    }

    /** Part reports of many orders; each item as {@code POST /orders/{orderId}/parts/{rank}} would. */
    @ProblemResponse(
            value = {ProblemType.INVALID_REQUEST, ProblemType.MALFORMED_REQUEST},
            note = "a malformed report refuses the batch; an item's own refusal is answered in its place")
    @ProblemResponse(
            value = {ProblemType.TOKEN_HOST_MISMATCH, ProblemType.NOT_HOST_OWNER},
            note = "an AGENT token of another host; a host registered to another agent subject")
    @ProblemResponse(
            value = {ProblemType.NO_SUCH_AGENT},
            note = "no agent registered for the host")
    @ProblemResponse(
            value = {ProblemType.STALE_EPOCH},
            note = "refuses the whole batch")
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
