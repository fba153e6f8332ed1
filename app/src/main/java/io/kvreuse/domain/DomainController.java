package io.kvreuse.domain;

import io.kvreuse.error.ProblemResponse;
import io.kvreuse.error.ProblemType;
import io.kvreuse.security.CurrentPrincipal;
import io.swagger.v3.oas.annotations.Operation;
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

    private final LayoutDomains domains;

    DomainController(LayoutDomains domains) {
        this.domains = domains;
    }

    /** 201 with {@code Location} the first time a contract is certified, 200 with the same id after. */
    @ApiResponse(responseCode = "201", description = "certified for the first time")
    @ApiResponse(responseCode = "200", description = "this contract was certified before: the same domain")
    @ProblemResponse({
        ProblemType.INVALID_REQUEST,
        ProblemType.MALFORMED_REQUEST,
        ProblemType.UNKNOWN_FIELD,
        ProblemType.DUPLICATE_EXTRA_KEY
    })
    @ProblemResponse({
        ProblemType.PARALLELISM_NOT_SUPPORTED,
        ProblemType.CPU_TRANSPORT_REQUIRES_TP1,
        ProblemType.MIXED_TRANSPORT_NOT_SUPPORTED,
        ProblemType.TRANSFORM_NOT_SUPPORTED,
        ProblemType.HEAD_PARTITION_NOT_SUPPORTED,
        ProblemType.TP_MUST_DIVIDE_KV_HEADS,
        ProblemType.DOMAIN_REVOKED
    })
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
    @ProblemResponse({ProblemType.INVALID_PARAMETER})
    @Operation(operationId = "listDomains", summary = "List layout domains (any role)")
    @GetMapping
    Flux<DomainResponse> list(
            @RequestParam(required = false) @Nullable DomainStatus status,
            @RequestParam(required = false) @Nullable String modelId,
            @RequestParam(required = false) @Nullable TransportClass transportClass) {
        return domains.list(status, modelId, transportClass).map(DomainResponse::of);
    }

    @ApiResponse(responseCode = "200", description = "the domain, certified or revoked")
    @ProblemResponse({ProblemType.DOMAIN_NOT_FOUND})
    @Operation(operationId = "getDomain", summary = "Read a layout domain (any role)")
    @GetMapping("/{domainId}")
    Mono<DomainResponse> get(@PathVariable String domainId) {
        return domains.find(domainId).map(DomainResponse::of);
    }

    /** Idempotent: revoking a revoked domain answers 200 with the domain as first revoked. */
    @ApiResponse(responseCode = "200", description = "the revoked domain (also when it was revoked before)")
    @ProblemResponse(
            value = {ProblemType.INVALID_REQUEST, ProblemType.MALFORMED_REQUEST},
            note = "a reason is required")
    @ProblemResponse({ProblemType.DOMAIN_NOT_FOUND})
    @Operation(operationId = "revokeDomain", summary = "Revoke a layout domain (OPERATOR)")
    @PostMapping("/{domainId}/revoke")
    Mono<DomainResponse> revoke(@PathVariable String domainId, @Valid @RequestBody RevokeRequest request) {
        return CurrentPrincipal.get()
                .flatMap(p -> domains.revoke(domainId, request.reason().strip(), p.actor()))
                .map(DomainResponse::of);
    }
}
