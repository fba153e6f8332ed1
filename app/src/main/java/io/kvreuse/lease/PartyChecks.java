package io.kvreuse.lease;

import io.kvreuse.incarnation.Incarnations;
import io.kvreuse.security.ApiPrincipal;
import io.kvreuse.security.Role;
import java.util.Map;
import java.util.UUID;
import org.jspecify.annotations.Nullable;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;

/**
 * Who may report on a lease, at which epoch. An engine acts on leases where it owns the side it
 * reports for (anything else is 404, so tokens cannot probe leases); an agent for the hosts it
 * registered that take part in the lease (the order's initiator, the donor's and the target's
 * hosts); an operator on all, without an epoch.
 */
@Component
class PartyChecks {

    private static final String AGENT = """
            SELECT host_id, agent_epoch FROM node_agent
            WHERE owner_subject = :owner AND host_id IN (
                SELECT host_id FROM transfer_order WHERE lease_id = :l
                UNION SELECT donor_host_id FROM transfer_order WHERE lease_id = :l
                UNION SELECT host_id FROM engine_incarnation WHERE incarnation_id IN (:d, :t))
            ORDER BY host_id LIMIT 1
            """;

    private final Incarnations incarnations;
    private final LeaseMetrics metrics;
    private final DatabaseClient db;

    PartyChecks(Incarnations incarnations, LeaseMetrics metrics, DatabaseClient db) {
        this.incarnations = incarnations;
        this.metrics = metrics;
        this.db = db;
    }

    /** An incarnation the principal owns, at this epoch: what a batch of its reports is checked against once. */
    Mono<Void> incarnation(UUID id, long epoch, ApiPrincipal p) {
        return incarnations
                .requireOwnership(id, p)
                .flatMap(inc -> checkEpoch("incarnation " + id, epoch, inc.fencingEpoch()));
    }

    /** An incarnation's current fencing state: what reports are checked against. */
    private record Party(UUID id, long epoch, String owner) {}

    private Mono<Party> party(UUID incarnationId) {
        return db.sql("SELECT fencing_epoch, owner_subject FROM engine_incarnation WHERE incarnation_id = :id")
                .bind("id", incarnationId)
                .map((r, m) -> new Party(
                        incarnationId, r.get("fencing_epoch", Long.class), r.get("owner_subject", String.class)))
                .one();
    }

    /** Whether the principal may report for the donor ({@code source}) or the target at this epoch. */
    Mono<Void> engineSide(LeaseRow lease, boolean source, ApiPrincipal p, @Nullable Long epoch) {
        return party(source ? lease.donorId() : lease.targetId()).flatMap(party -> {
            if (p.role() == Role.OPERATOR) {
                return Mono.empty();
            }
            if (p.role() != Role.ENGINE || !party.owner().equals(p.subject())) {
                return otherSide(lease, source, p)
                        .flatMap(owns -> Mono.error(
                                owns
                                        ? LeaseProblems.notAParty(lease.leaseId(), p.role())
                                        : LeaseProblems.noSuchLease(lease.leaseId())));
            }
            return checkEpoch("incarnation " + party.id(), epoch, party.epoch());
        });
    }

    private Mono<Boolean> otherSide(LeaseRow lease, boolean source, ApiPrincipal p) {
        if (p.role() != Role.ENGINE) {
            return Mono.just(p.role() == Role.AGENT);
        }
        return party(source ? lease.targetId() : lease.donorId())
                .map(o -> o.owner().equals(p.subject()));
    }

    /** Whether the principal may attest quiescence of one side: its engine, a participating agent, or an operator. */
    Mono<Void> quiescenceWitness(LeaseRow lease, boolean source, ApiPrincipal p, @Nullable Long epoch) {
        return switch (p.role()) {
            case OPERATOR -> Mono.empty();
            case ENGINE -> engineSide(lease, source, p, epoch);
            case AGENT ->
                db.sql(AGENT)
                        .bind("owner", p.subject())
                        .bind("l", lease.leaseId())
                        .bind("d", lease.donorId())
                        .bind("t", lease.targetId())
                        .map((r, m) -> Map.entry(r.get("host_id", String.class), r.get("agent_epoch", Long.class)))
                        .one()
                        .switchIfEmpty(Mono.error(() -> LeaseProblems.noSuchLease(lease.leaseId())))
                        .flatMap(a -> checkEpoch("agent of host " + a.getKey(), epoch, a.getValue()));
            case ROUTER -> Mono.error(LeaseProblems.notAParty(lease.leaseId(), p.role()));
        };
    }

    private Mono<Void> checkEpoch(String subject, @Nullable Long presented, long current) {
        if (presented == null) {
            return Mono.error(LeaseProblems.invalid("fencingEpoch is required"));
        }
        if (presented != current) {
            metrics.stale(subject.startsWith("agent") ? "agent" : "incarnation");
            return Mono.error(LeaseProblems.staleEpoch(subject, presented, current));
        }
        return Mono.empty();
    }
}
