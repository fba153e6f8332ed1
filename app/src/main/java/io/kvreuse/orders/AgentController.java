package io.kvreuse.orders;

import io.kvreuse.error.BatchResults;
import io.kvreuse.lease.LongPoll;
import io.kvreuse.security.CurrentPrincipal;
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

    AgentController(NodeAgents agents, TransferOrders orders) {
        this.agents = agents;
        this.orders = orders;
    }

    /** 201 for a new host, 200 when its owner registers it again (a new agent epoch). */
    @PostMapping("/api/v1/agents")
    Mono<ResponseEntity<AgentView>> register(@Valid @RequestBody AgentRequests.Register body) {
        return CurrentPrincipal.get()
                .flatMap(p -> agents.register(body, p))
                .map(r -> ResponseEntity.status(r.created() ? HttpStatus.CREATED : HttpStatus.OK)
                        .location(URI.create("/api/v1/agents/" + r.agent().hostId()))
                        .body(r.agent()));
    }

    @PostMapping("/api/v1/agents/{hostId}/heartbeat")
    Mono<AgentView> heartbeat(
            @PathVariable String hostId, @RequestBody(required = false) @Valid AgentRequests.@Nullable Heartbeat body) {
        return CurrentPrincipal.get()
                .flatMap(p -> agents.heartbeat(hostId, body == null ? null : body.fencingEpoch(), p));
    }

    @GetMapping("/api/v1/agents")
    Flux<AgentView> list() {
        return CurrentPrincipal.get().flatMapMany(agents::list);
    }

    @GetMapping("/api/v1/agents/{hostId}")
    Mono<AgentView> get(@PathVariable String hostId) {
        return CurrentPrincipal.get().flatMap(p -> agents.get(hostId, p));
    }

    @GetMapping("/api/v1/agents/{hostId}/orders")
    Mono<List<TransferOrder>> orders(
            @PathVariable String hostId, @RequestParam(required = false) @Nullable Long waitMs) {
        return CurrentPrincipal.get().flatMap(p -> orders.poll(hostId, LongPoll.waitOf(waitMs), p));
    }

    /** Claimed orders of the host whose parts are not final: what a restarted agent must settle first. */
    @GetMapping("/api/v1/agents/{hostId}/orders/unfinished")
    Mono<List<TransferOrder.Unfinished>> unfinished(@PathVariable String hostId) {
        return CurrentPrincipal.get().flatMap(p -> orders.unfinished(hostId, p));
    }

    @PostMapping("/api/v1/orders/{orderId}/parts/{rank}")
    Mono<TransferOrder.PartAck> part(
            @PathVariable UUID orderId, @PathVariable int rank, @Valid @RequestBody AgentRequests.PartReport body) {
        return CurrentPrincipal.get().flatMap(p -> orders.report(orderId, rank, body, p));
    }

    /** Part reports of many orders; each item as {@code POST /orders/{orderId}/parts/{rank}} would. */
    @PostMapping("/api/v1/agents/{hostId}/parts")
    Mono<BatchResults<TransferOrder.PartAck>> parts(
            @PathVariable String hostId, @Valid @RequestBody AgentRequests.PartReports body) {
        return CurrentPrincipal.get()
                .flatMap(p -> orders.reports(hostId, body, p))
                .map(BatchResults::new);
    }
}
