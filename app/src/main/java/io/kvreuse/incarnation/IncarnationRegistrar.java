package io.kvreuse.incarnation;

import io.kvreuse.audit.AuditEntry;
import io.kvreuse.audit.AuditTrail;
import io.kvreuse.bank.RetainedBanks;
import io.kvreuse.domain.LayoutDomain;
import io.kvreuse.domain.LayoutDomains;
import io.kvreuse.domain.NoSuchDomainException;
import io.kvreuse.security.ApiPrincipal;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import org.jspecify.annotations.Nullable;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.stereotype.Service;
import org.springframework.transaction.reactive.TransactionalOperator;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;

/**
 * Registers engine incarnations. The database holds the invariants (a stable name held by one
 * incarnation that has not exited cleanly; a GPU ordinal per host held by one live incarnation);
 * a violated constraint is mapped by name to its problem, never to a 5xx.
 */
@Service
class IncarnationRegistrar {

    private static final String PKEY = "engine_incarnation_pkey";
    private static final String STABLE_NAME = "engine_incarnation_stable_name_held";
    private static final String LIVE_GPU = "incarnation_rank_live_gpu";

    private final IncarnationStore store;
    private final IdempotencyStore idempotency;
    private final LayoutDomains domains;
    private final TransactionalOperator tx;
    private final AuditTrail audit;
    private final ApplicationEventPublisher events;
    private final JsonMapper json;
    private final Clock clock;
    private final RetainedBanks banks;

    IncarnationRegistrar(
            IncarnationStore store,
            IdempotencyStore idempotency,
            LayoutDomains domains,
            TransactionalOperator tx,
            AuditTrail audit,
            ApplicationEventPublisher events,
            JsonMapper json,
            Clock clock,
            RetainedBanks banks) {
        this.store = store;
        this.idempotency = idempotency;
        this.domains = domains;
        this.tx = tx;
        this.audit = audit;
        this.events = events;
        this.json = json;
        this.clock = clock;
        this.banks = banks;
    }

    /** Registers, or with an Idempotency-Key already used for the same body, replays the first answer. */
    Mono<Registration> register(RegisterRequest request, ApiPrincipal engine, @Nullable String idempotencyKey) {
        return Mono.defer(() -> {
            if (!engine.mayActOn(request.hostId().strip())) {
                return Mono.error(
                        RegistrationProblems.hostOutOfScope(request.hostId().strip(), engine.hostId()));
            }
            NewIncarnation n = prepare(request, engine);
            Mono<RegistrationReport> create = create(n, request, engine);
            if (idempotencyKey == null) {
                return create.as(tx::transactional)
                        .onErrorResume(e -> translate(e, n))
                        .map(r -> published(r, n));
            }
            String key = checkKey(idempotencyKey);
            String scope = "incarnation:" + engine.subject();
            String hash = sha256(json.writeValueAsString(request));
            return idempotency
                    .claim(scope, key, hash)
                    .flatMap(claimed -> claimed
                            ? create.flatMap(r -> idempotency
                                    .complete(scope, key, 201, json.writeValueAsString(r))
                                    .thenReturn(r))
                            : Mono.<RegistrationReport>error(new KeyTaken()))
                    .as(tx::transactional)
                    .onErrorResume(e -> translate(e, n))
                    .map(r -> published(r, n))
                    .onErrorResume(KeyTaken.class, e -> replay(scope, key, hash));
        });
    }

    /** After commit: the same events a registration and a first heartbeat publish, then the bank's. */
    private Registration published(RegistrationReport r, NewIncarnation n) {
        events.publishEvent(new IncarnationStateChanged(n.id(), null, IncarnationState.REGISTERED, 1L));
        if (r.state() == IncarnationState.READY) {
            events.publishEvent(new IncarnationStateChanged(
                    n.id(), IncarnationState.REGISTERED, IncarnationState.READY, r.fencingEpoch()));
        }
        if (r.bankId() != null) {
            banks.announce(r.bankId());
        }
        return new Registration(r, false);
    }

    private Mono<Registration> replay(String scope, String key, String hash) {
        return idempotency.find(scope, key).map(stored -> {
            if (!stored.requestHash().equals(hash)) {
                throw RegistrationProblems.idempotencyKeyReused(key);
            }
            return new Registration(json.readValue(stored.responseJson(), RegistrationReport.class), true);
        });
    }

    private Mono<RegistrationReport> create(NewIncarnation n, RegisterRequest request, ApiPrincipal engine) {
        String actor = engine.actor();
        Mono<Void> idUnused = request.incarnationId() != null
                ? store.find(n.id()).flatMap(existing -> Mono.error(RegistrationProblems.idReused(n.id())))
                : Mono.empty();
        Mono<Void> nameFree = n.stableName() == null
                ? Mono.empty()
                : store.stableNameHolder(n.stableName())
                        .flatMap(h -> Mono.error(
                                RegistrationProblems.stableNameHeld(n.stableName(), h.getKey(), h.getValue())));
        return domains.findForUse(n.domainId())
                .onErrorMap(NoSuchDomainException.class, e -> RegistrationProblems.unknownDomain(n.domainId()))
                .doOnNext(domain -> checkRanks(domain, n.ranks()))
                .then(idUnused)
                .then(nameFree)
                .then(store.insert(n, clock.instant()))
                .then(audit.record(new AuditEntry(
                        actor,
                        Incarnations.SUBJECT_TYPE,
                        n.id().toString(),
                        "REGISTERED",
                        null,
                        IncarnationState.REGISTERED.name(),
                        1L,
                        null,
                        n.auditDetail())))
                .then(Mono.defer(() -> request.startsReady() ? firstHeartbeat(n.id(), actor) : Mono.just(1L)))
                .flatMap(epoch -> {
                    IncarnationState state =
                            request.startsReady() ? IncarnationState.READY : IncarnationState.REGISTERED;
                    if (request.bank() == null) {
                        return Mono.just(new RegistrationReport(n.id(), state, epoch, null));
                    }
                    return banks.createForRegistration(n.id(), request.bank(), engine)
                            .map(bankId -> new RegistrationReport(n.id(), state, epoch, bankId));
                });
    }

    /**
     * A registration that is also the first heartbeat: the REGISTERED → READY move a heartbeat makes
     * (epoch 2, liveness counted from now, audited), in the registration's transaction.
     */
    private Mono<Long> firstHeartbeat(UUID id, String actor) {
        return store.transition(id, IncarnationState.REGISTERED, IncarnationState.READY, 1L, true, clock.instant())
                .flatMap(epoch -> audit.record(AuditEntry.transition(
                                        actor,
                                        Incarnations.SUBJECT_TYPE,
                                        id.toString(),
                                        IncarnationState.REGISTERED.name(),
                                        IncarnationState.READY.name(),
                                        epoch)
                                .withReason("heartbeat"))
                        .thenReturn(epoch))
                .switchIfEmpty(
                        Mono.error(() -> new IllegalStateException("incarnation " + id + " moved while registering")));
    }

    /** Maps a violated unique constraint (a race the pre-checks could not see) to its problem. */
    private Mono<RegistrationReport> translate(Throwable e, NewIncarnation n) {
        String constraint = Constraints.uniqueViolated(e);
        if (constraint == null) {
            return Mono.error(e);
        }
        return switch (constraint) {
            case PKEY -> Mono.error(RegistrationProblems.idReused(n.id()));
            case STABLE_NAME ->
                store.stableNameHolder(String.valueOf(n.stableName()))
                        .map(h -> RegistrationProblems.stableNameHeld(n.stableName(), h.getKey(), h.getValue()))
                        .defaultIfEmpty(RegistrationProblems.stableNameHeld(n.stableName(), null, null))
                        .flatMap(Mono::error);
            case LIVE_GPU -> {
                List<Integer> ordinals =
                        n.ranks().stream().map(IncarnationView.Rank::gpuOrdinal).toList();
                yield store.gpuHolder(n.hostId(), ordinals)
                        .map(h -> RegistrationProblems.gpuOrdinalInUse(n.hostId(), h.getKey(), h.getValue()))
                        .defaultIfEmpty(RegistrationProblems.gpuOrdinalInUse(n.hostId(), null, null))
                        .flatMap(Mono::error);
            }
            default -> Mono.error(e);
        };
    }

    private static NewIncarnation prepare(RegisterRequest r, ApiPrincipal engine) {
        Set<Integer> ordinals = new HashSet<>();
        Set<String> uuids = new HashSet<>();
        for (RegisterRequest.RankRequest rank : r.ranks()) {
            if (!ordinals.add(rank.gpuOrdinal())) {
                throw RegistrationProblems.duplicateGpu("gpuOrdinal " + rank.gpuOrdinal());
            }
            if (!uuids.add(rank.gpuUuid().strip())) {
                throw RegistrationProblems.duplicateGpu(
                        "gpuUuid " + rank.gpuUuid().strip());
            }
        }
        List<IncarnationView.Rank> ranks = r.ranks().stream()
                .map(k -> new IncarnationView.Rank(
                        k.rank(), k.gpuOrdinal(), k.gpuUuid().strip(), true))
                .sorted(java.util.Comparator.comparingInt(IncarnationView.Rank::rank))
                .toList();
        return new NewIncarnation(
                r.incarnationId() != null ? r.incarnationId() : UUID.randomUUID(),
                r.stableName(),
                r.role(),
                r.domainId().strip(),
                r.hostId().strip(),
                r.fabricDomain() == null ? null : r.fabricDomain().strip(),
                r.controlEndpoint().strip(),
                r.capabilities().stream().map(String::strip).distinct().toList(),
                engine.subject(),
                ranks);
    }

    private static void checkRanks(LayoutDomain domain, List<IncarnationView.Rank> ranks) {
        int tp = domain.tpSize();
        for (int i = 0; i < ranks.size(); i++) {
            if (ranks.get(i).rank() != i || i >= tp) {
                throw RegistrationProblems.rankLayoutMismatch(
                        tp,
                        "got ranks "
                                + ranks.stream().map(IncarnationView.Rank::rank).toList());
            }
        }
        if (ranks.size() != tp) {
            throw RegistrationProblems.rankLayoutMismatch(tp, "got " + ranks.size() + " rank(s)");
        }
    }

    private static String checkKey(String key) {
        if (key.isEmpty() || key.length() > 200 || !key.chars().allMatch(c -> c > 0x20 && c < 0x7f)) {
            throw RegistrationProblems.invalidIdempotencyKey();
        }
        return key;
    }

    private static String sha256(String s) {
        try {
            return HexFormat.of()
                    .formatHex(MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required by every JVM", e);
        }
    }

    /** A registration's answer, and whether it was replayed for a repeated Idempotency-Key. */
    record Registration(RegistrationReport report, boolean replayed) {}

    /** The key was claimed before: replay its answer instead. */
    private static final class KeyTaken extends RuntimeException {
        KeyTaken() {
            super("idempotency key already used", null, false, false);
        }
    }
}
