package io.kvreuse.domain;

import static io.kvreuse.store.Sql.orNull;

import io.kvreuse.audit.AuditEntry;
import io.kvreuse.audit.AuditTrail;
import io.r2dbc.postgresql.codec.Json;
import io.r2dbc.spi.Readable;
import java.time.Clock;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.stereotype.Service;
import org.springframework.transaction.reactive.TransactionalOperator;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;

/**
 * The registry of layout domains: certification by contract digest (idempotent, race-safe),
 * revocation, and lookups for the other features.
 */
@Service
public class LayoutDomains {

    private static final String SUBJECT_TYPE = "domain";

    private final DatabaseClient db;
    private final TransactionalOperator tx;
    private final AuditTrail audit;
    private final JsonMapper json;
    private final Clock clock;

    LayoutDomains(DatabaseClient db, TransactionalOperator tx, AuditTrail audit, JsonMapper json, Clock clock) {
        this.db = db;
        this.tx = tx;
        this.audit = audit;
        this.json = json;
        this.clock = clock;
    }

    /** The domain, or {@link NoSuchDomainException}. */
    public Mono<LayoutDomain> find(String domainId) {
        if (!ContractDigest.looksLikeId(domainId)) {
            return Mono.error(new NoSuchDomainException(domainId));
        }
        return db.sql("SELECT * FROM layout_domain WHERE domain_id = :id")
                .bind("id", domainId)
                .map(this::toDomain)
                .one()
                .switchIfEmpty(Mono.error(() -> new NoSuchDomainException(domainId)));
    }

    /**
     * The domain for a new use (a registration, a lease): it must exist and be certified. Inside a
     * transaction this holds a share lock on the row until commit, so a concurrent revocation waits
     * and nothing new slips in after it. Fails with {@link NoSuchDomainException} or {@link
     * DomainRevokedException}.
     */
    public Mono<LayoutDomain> findForUse(String domainId) {
        if (!ContractDigest.looksLikeId(domainId)) {
            return Mono.error(new NoSuchDomainException(domainId));
        }
        return db.sql("SELECT * FROM layout_domain WHERE domain_id = :id FOR SHARE")
                .bind("id", domainId)
                .map(this::toDomain)
                .one()
                .switchIfEmpty(Mono.error(() -> new NoSuchDomainException(domainId)))
                .flatMap(d -> d.isCertified() ? Mono.just(d) : Mono.error(new DomainRevokedException(d)));
    }

    /** Domains matching every given filter, most recently certified first. */
    public Flux<LayoutDomain> list(
            @Nullable DomainStatus status, @Nullable String modelId, @Nullable TransportClass transport) {
        return db.sql("""
                        SELECT * FROM layout_domain
                        WHERE (CAST(:status AS TEXT) IS NULL OR status = :status)
                          AND (CAST(:modelId AS TEXT) IS NULL OR model_id = :modelId)
                          AND (CAST(:transport AS TEXT) IS NULL OR transport_class = :transport)
                        ORDER BY certified_at DESC, domain_id
                        """)
                .bind("status", orNull(status == null ? null : status.name(), String.class))
                .bind("modelId", orNull(modelId, String.class))
                .bind("transport", orNull(transport == null ? null : transport.name(), String.class))
                .map(this::toDomain)
                .all();
    }

    /**
     * Certifies a contract. The first certification creates the domain and is audited; repeating the
     * same contract returns the stored domain; a revoked contract is refused ({@code domain-revoked}).
     */
    public Mono<Certification> certify(LayoutContract contract, String actor) {
        return Mono.defer(() -> {
            ContractRules.check(contract);
            return certifyChecked(contract, actor);
        });
    }

    private Mono<Certification> certifyChecked(LayoutContract contract, String actor) {
        String id = ContractDigest.domainId(contract);
        // ON CONFLICT DO NOTHING waits for a concurrent certification of the same contract, so the
        // loser reads the winner's row instead of failing.
        Mono<Boolean> created = insert(id, contract, actor)
                .flatMap(n -> n == 0
                        ? Mono.just(false)
                        : audit.record(new AuditEntry(
                                        actor,
                                        SUBJECT_TYPE,
                                        id,
                                        "DOMAIN_CERTIFIED",
                                        null,
                                        DomainStatus.CERTIFIED.name(),
                                        null,
                                        null,
                                        Map.of(
                                                "modelId", contract.modelId(),
                                                "transportClass",
                                                        contract.transportClass()
                                                                .name(),
                                                "tpSize", contract.tpSize())))
                                .thenReturn(true))
                .as(tx::transactional);
        return created.flatMap(isNew -> find(id).map(domain -> {
            if (!isNew && !domain.isCertified()) {
                throw new DomainRevokedException(domain);
            }
            return new Certification(domain, isNew);
        }));
    }

    /**
     * Revokes a domain. Idempotent: revoking a revoked domain returns it unchanged (the first reason
     * and actor stay) and writes no second audit row.
     */
    public Mono<LayoutDomain> revoke(String domainId, String reason, String actor) {
        Instant now = clock.instant();
        return find(domainId)
                .flatMap(domain -> domain.isCertified()
                        ? db.sql("""
                                        UPDATE layout_domain
                                        SET status = 'REVOKED', revoked_at = :now, revoked_by = :actor, revoke_reason = :reason
                                        WHERE domain_id = :id AND status = 'CERTIFIED'
                                        """)
                                .bind("now", now.atOffset(ZoneOffset.UTC))
                                .bind("actor", actor)
                                .bind("reason", reason)
                                .bind("id", domainId)
                                .fetch()
                                .rowsUpdated()
                                .flatMap(n -> n == 0
                                        ? Mono.empty()
                                        : audit.record(new AuditEntry(
                                                actor,
                                                SUBJECT_TYPE,
                                                domainId,
                                                "DOMAIN_REVOKED",
                                                DomainStatus.CERTIFIED.name(),
                                                DomainStatus.REVOKED.name(),
                                                null,
                                                reason,
                                                Map.of())))
                        : Mono.empty())
                .as(tx::transactional)
                .then(find(domainId));
    }

    private Mono<Long> insert(String id, LayoutContract c, String actor) {
        return db.sql("""
                        INSERT INTO layout_domain (domain_id, status, contract, model_id, transport_class,
                            block_size_tokens, bytes_per_block_per_rank, num_kv_heads, tp_size, dp_size, pp_size,
                            cp_size, certified_at, certified_by)
                        VALUES (:id, 'CERTIFIED', :contract, :modelId, :transport, :blockSize, :bytesPerBlock,
                            :kvHeads, :tp, :dp, :pp, :cp, :now, :actor)
                        ON CONFLICT (domain_id) DO NOTHING
                        """)
                .bind("id", id)
                .bind("contract", Json.of(ContractDigest.canonicalJson(c)))
                .bind("modelId", c.modelId())
                .bind("transport", c.transportClass().name())
                .bind("blockSize", c.blockSizeTokens())
                .bind("bytesPerBlock", c.bytesPerBlockPerRank())
                .bind("kvHeads", c.numKvHeads())
                .bind("tp", c.tpSize())
                .bind("dp", c.dpSize())
                .bind("pp", c.ppSize())
                .bind("cp", c.cpSize())
                .bind("now", clock.instant().atOffset(ZoneOffset.UTC))
                .bind("actor", actor)
                .fetch()
                .rowsUpdated();
    }

    private LayoutDomain toDomain(Readable row) {
        return new LayoutDomain(
                row.get("domain_id", String.class),
                DomainStatus.valueOf(row.get("status", String.class)),
                json.readValue(row.get("contract", Json.class).asString(), LayoutContract.class),
                row.get("certified_at", OffsetDateTime.class).toInstant(),
                row.get("certified_by", String.class),
                toInstant(row.get("revoked_at", OffsetDateTime.class)),
                row.get("revoked_by", String.class),
                row.get("revoke_reason", String.class));
    }

    private static @Nullable Instant toInstant(@Nullable OffsetDateTime t) {
        return t == null ? null : t.toInstant();
    }

    /** The outcome of a certification: the domain and whether this call created it. */
    public record Certification(LayoutDomain domain, boolean created) {}
}
