package io.kvreuse.domain;

import io.kvreuse.security.CurrentPrincipal;
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

    @GetMapping
    Flux<DomainResponse> list(
            @RequestParam(required = false) @Nullable DomainStatus status,
            @RequestParam(required = false) @Nullable String modelId,
            @RequestParam(required = false) @Nullable TransportClass transportClass) {
        return domains.list(status, modelId, transportClass).map(DomainResponse::of);
    }

    @GetMapping("/{domainId}")
    Mono<DomainResponse> get(@PathVariable String domainId) {
        return domains.find(domainId).map(DomainResponse::of);
    }

    /** Idempotent: revoking a revoked domain answers 200 with the domain as first revoked. */
    @PostMapping("/{domainId}/revoke")
    Mono<DomainResponse> revoke(@PathVariable String domainId, @Valid @RequestBody RevokeRequest request) {
        return CurrentPrincipal.get()
                .flatMap(p -> domains.revoke(domainId, request.reason().strip(), p.actor()))
                .map(DomainResponse::of);
    }
}
