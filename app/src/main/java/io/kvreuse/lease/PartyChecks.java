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

    /**
     * Whether the principal may report for the donor ({@code source}) or the target at this epoch,
     * checked against the parties as the lease's aggregate read them.
     */
    Mono<Void> engineSide(LeaseAggregate lease, boolean source, ApiPrincipal p, @Nullable Long epoch) {
        LeaseAggregate.Parties now = lease.parties();
        String owner = source ? now.donorOwner() : now.targetOwner();
        if (p.role() == Role.OPERATOR) {
            return Mono.empty();
        }
        UUID leaseId = lease.row().leaseId();
        if (p.role() != Role.ENGINE || !p.subject().equals(owner)) {
            boolean ownsOther = p.role() == Role.AGENT
                    || (p.role() == Role.ENGINE && p.subject().equals(source ? now.targetOwner() : now.donorOwner()));
            return Mono.error(
                    ownsOther ? LeaseProblems.notAParty(leaseId, p.role()) : LeaseProblems.noSuchLease(leaseId));
        }
        UUID side = source ? lease.row().donorId() : lease.row().targetId();
        return checkEpoch("incarnation " + side, epoch, source ? now.donorEpoch() : now.targetEpoch());
    }

    /** Whether the principal may attest quiescence of one side: its engine, a participating agent, or an operator. */
    Mono<Void> quiescenceWitness(LeaseAggregate aggregate, boolean source, ApiPrincipal p, @Nullable Long epoch) {
        LeaseRow lease = aggregate.row();
        return switch (p.role()) {
            case OPERATOR -> Mono.empty();
            case ENGINE -> engineSide(aggregate, source, p, epoch);
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
