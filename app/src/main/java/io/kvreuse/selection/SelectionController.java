package io.kvreuse.selection;

import io.kvreuse.error.ProblemResponse;
import io.kvreuse.error.ProblemType;
import io.swagger.v3.oas.annotations.Operation;
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

    @ProblemResponse(
            value = {ProblemType.INVALID_REQUEST, ProblemType.MALFORMED_REQUEST, ProblemType.INVALID_HASH},
            note = "a no-hint is an answer (200), never a problem")
    @Operation(
            operationId = "selectDonor",
            summary = "Ask for a donor: a hint and a PROPOSED lease, or NO_HINT with one reason (ROUTER)")
    @PostMapping("/api/v1/donor-selections")
    Mono<SelectionApi.Response> select(@Valid @RequestBody SelectionApi.Request request, ServerWebExchange exchange) {
        return selection.select(request, SelectionArrival.of(exchange), DeadlineTimers.of(exchange));
    }

    /**
     * Many selections at once, each answered as if sent alone (its own deadline, its own NO_HINT
     * reason). Their PROPOSED leases are written together. A malformed item refuses the whole batch
     * with 400 before anything is selected.
     */
    @ProblemResponse(
            value = {ProblemType.INVALID_REQUEST, ProblemType.MALFORMED_REQUEST, ProblemType.INVALID_HASH},
            note = "one malformed item refuses the whole batch before anything is selected")
    @Operation(operationId = "selectDonors", summary = "Ask for donors for up to 256 requests at once (ROUTER)")
    @PostMapping("/api/v1/donor-selections/batch")
    Mono<SelectionApi.BatchResponse> selectAll(
            @Valid @RequestBody SelectionApi.BatchRequest body, ServerWebExchange exchange) {
        return selection
                .selectAll(body.selections(), SelectionArrival.of(exchange), DeadlineTimers.of(exchange))
                .map(SelectionApi.BatchResponse::new);
    }
}
