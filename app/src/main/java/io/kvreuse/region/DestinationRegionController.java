package io.kvreuse.region;

import io.kvreuse.security.CurrentPrincipal;
import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.media.Content;
import io.swagger.v3.oas.annotations.responses.ApiResponse;
import jakarta.validation.Valid;
import java.util.UUID;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

/**
 * A target incarnation's destination regions (ENGINE registers its own; operators and the host's
 * agent read). Another engine's incarnation answers 404, as if it did not exist.
 */
@RestController
@RequestMapping("/api/v1/incarnations/{id}/destination-regions")
class DestinationRegionController {

    private static final String PROBLEM = "application/problem+json";

    private final DestinationRegions regions;

    DestinationRegionController(DestinationRegions regions) {
        this.regions = regions;
    }

    @ApiResponse(responseCode = "200", description = "every destination region the incarnation registered")
    @ApiResponse(
            responseCode = "400",
            description = "invalid-request (e.g. a region reference outside shm:// and cuda-ipc://),"
                    + " malformed-request, invalid-destination-region (a rank the incarnation does not have)",
            content = @Content(mediaType = PROBLEM))
    @ApiResponse(
            responseCode = "404",
            description = "incarnation-not-found (also for another engine's incarnation)",
            content = @Content(mediaType = PROBLEM))
    @ApiResponse(
            responseCode = "409",
            description = "stale-epoch, incarnation-not-open, destination-region-differs, region-held (another live"
                    + " incarnation of the host registered it as a bank part or destination region)",
            content = @Content(mediaType = PROBLEM))
    @Operation(operationId = "registerDestinationRegions", summary = "Register a target's destination regions (ENGINE)")
    @PostMapping
    Mono<DestinationRegionRequests.DestinationRegionList> register(
            @PathVariable UUID id,
            @Valid @RequestBody DestinationRegionRequests.DestinationRegionRegistration request) {
        return CurrentPrincipal.get().flatMap(p -> regions.register(id, request, p));
    }

    @ApiResponse(responseCode = "200", description = "every destination region the incarnation registered")
    @ApiResponse(responseCode = "400", description = "invalid-parameter", content = @Content(mediaType = PROBLEM))
    @ApiResponse(
            responseCode = "404",
            description = "incarnation-not-found (also for another engine's incarnation)",
            content = @Content(mediaType = PROBLEM))
    @Operation(
            operationId = "listDestinationRegions",
            summary = "List a target's destination regions (ENGINE owner, AGENT, OPERATOR)")
    @GetMapping
    Mono<DestinationRegionRequests.DestinationRegionList> list(@PathVariable UUID id) {
        return CurrentPrincipal.get().flatMap(p -> regions.list(id, p));
    }
}
