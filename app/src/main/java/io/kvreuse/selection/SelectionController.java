package io.kvreuse.selection;

import jakarta.validation.Valid;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;

/** {@code POST /api/v1/donor-selections} (ROUTER): a no-hint is an answer, not an error. */
@RestController
class SelectionController {

    private final SelectionService selection;

    SelectionController(SelectionService selection) {
        this.selection = selection;
    }

    @PostMapping("/api/v1/donor-selections")
    Mono<SelectionApi.Response> select(@Valid @RequestBody SelectionApi.Request request, ServerWebExchange exchange) {
        return selection.select(request, SelectionArrival.of(exchange));
    }

    /**
     * Many selections at once, each answered as if sent alone (its own deadline, its own NO_HINT
     * reason). Their PROPOSED leases are written together. A malformed item refuses the whole batch
     * with 400 before anything is selected.
     */
    @PostMapping("/api/v1/donor-selections/batch")
    Mono<SelectionApi.BatchResponse> selectAll(
            @Valid @RequestBody SelectionApi.BatchRequest body, ServerWebExchange exchange) {
        return selection
                .selectAll(body.selections(), SelectionArrival.of(exchange))
                .map(SelectionApi.BatchResponse::new);
    }
}
