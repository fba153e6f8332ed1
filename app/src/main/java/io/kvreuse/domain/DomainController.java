package io.kvreuse.domain;

import io.kvreuse.security.CurrentPrincipal;
import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.media.Content;
import io.swagger.v3.oas.annotations.responses.ApiResponse;
import jakarta.validation.Valid;
import java.net.URI;
import org.jspecify.annotations.Nullable;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/** Layout domains: operators certify and revoke, every role reads. */
@RestController
@RequestMapping("/api/v1/domains")
class DomainController {

    private static final String PROBLEM = "application/problem+json";

    private final LayoutDomains domains;

    DomainController(LayoutDomains domains) {
        this.domains = domains;
    }

    /** 201 with {@code Location} the first time a contract is certified, 200 with the same id after. */
    @ApiResponse(responseCode = "201", description = "certified for the first time")
    @ApiResponse(responseCode = "200", description = "this contract was certified before: the same domain")
    @ApiResponse(
            responseCode = "400",
            description = "invalid-request, malformed-request, unknown-field, duplicate-extra-key",
            content = @Content(mediaType = PROBLEM))
    @ApiResponse(
            responseCode = "422",
            description =
                    "parallelism-not-supported, cpu-transport-requires-tp1, mixed-transport-not-supported, transform-not-supported, head-partition-not-supported, tp-must-divide-kv-heads, domain-revoked",
            content = @Content(mediaType = PROBLEM))
    @Operation(
            operationId = "certifyDomain",
            summary = "Certify a layout contract; the same contract returns the same domain (OPERATOR)")
    @PostMapping
    Mono<ResponseEntity<DomainResponse>> certify(@Valid @RequestBody CertifyRequest request) {
        return Mono.fromCallable(request::toContract)
                .flatMap(contract -> CurrentPrincipal.get().flatMap(p -> domains.certify(contract, p.actor())))
                .map(c -> c.created()
                        ? ResponseEntity.created(URI.create(
                                        "/api/v1/domains/" + c.domain().domainId()))
                                .body(DomainResponse.of(c.domain()))
                        : ResponseEntity.status(HttpStatus.OK).body(DomainResponse.of(c.domain())));
    }

    @ApiResponse(responseCode = "200", description = "domains matching the filters")
    @ApiResponse(responseCode = "400", description = "invalid-parameter", content = @Content(mediaType = PROBLEM))
    @Operation(operationId = "listDomains", summary = "List layout domains (any role)")
    @GetMapping
    Flux<DomainResponse> list(
            @RequestParam(required = false) @Nullable DomainStatus status,
            @RequestParam(required = false) @Nullable String modelId,
            @RequestParam(required = false) @Nullable TransportClass transportClass) {
        return domains.list(status, modelId, transportClass).map(DomainResponse::of);
    }

    @ApiResponse(responseCode = "200", description = "the domain, certified or revoked")
    @ApiResponse(responseCode = "404", description = "domain-not-found", content = @Content(mediaType = PROBLEM))
    @Operation(operationId = "getDomain", summary = "Read a layout domain (any role)")
    @GetMapping("/{domainId}")
    Mono<DomainResponse> get(@PathVariable String domainId) {
        return domains.find(domainId).map(DomainResponse::of);
    }

    /** Idempotent: revoking a revoked domain answers 200 with the domain as first revoked. */
    @ApiResponse(responseCode = "200", description = "the revoked domain (also when it was revoked before)")
    @ApiResponse(
            responseCode = "400",
            description = "invalid-request, malformed-request: a reason is required",
            content = @Content(mediaType = PROBLEM))
    @ApiResponse(responseCode = "404", description = "domain-not-found", content = @Content(mediaType = PROBLEM))
    @Operation(operationId = "revokeDomain", summary = "Revoke a layout domain (OPERATOR)")
    @PostMapping("/{domainId}/revoke")
    Mono<DomainResponse> revoke(@PathVariable String domainId, @Valid @RequestBody RevokeRequest request) {
        return CurrentPrincipal.get()
                .flatMap(p -> domains.revoke(domainId, request.reason().strip(), p.actor()))
                .map(DomainResponse::of);
    }
}
