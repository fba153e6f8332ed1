package io.kvreuse.lease;

import io.kvreuse.security.ApiPrincipal;
import io.kvreuse.security.Role;
import org.jspecify.annotations.Nullable;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Who may report on a lease, at which epoch. An engine acts on leases where it owns the side it
 * reports for (anything else is 404, so tokens cannot probe leases); an agent for the hosts it
 * registered that take part in the lease; an operator on all, without an epoch.
 */
@Component
class PartyChecks {

    private final LeaseStore leases;
    private final OrderWriter orders;
    private final LeaseMetrics metrics;
    private final DatabaseClient db;

    PartyChecks(LeaseStore leases, OrderWriter orders, LeaseMetrics metrics, DatabaseClient db) {
        this.leases = leases;
        this.orders = orders;
        this.metrics = metrics;
        this.db = db;
    }

    /** The target party, if the principal may report for it at this epoch. */
    Mono<LeaseStore.Party> target(LeaseRow lease, ApiPrincipal p, @Nullable Long epoch) {
        return engineSide(lease, false, p, epoch);
    }

    private Mono<LeaseStore.Party> engineSide(LeaseRow lease, boolean source, ApiPrincipal p, @Nullable Long epoch) {
        return leases.party(source ? lease.donorId() : lease.targetId()).flatMap(party -> {
            if (p.role() == Role.OPERATOR) {
                return Mono.just(party);
            }
            if (p.role() != Role.ENGINE || !party.owner().equals(p.subject())) {
                return otherSide(lease, source, p)
                        .flatMap(owns -> Mono.error(
                                owns
                                        ? LeaseProblems.notAParty(lease.leaseId(), p.role())
                                        : LeaseProblems.noSuchLease(lease.leaseId())));
            }
            return checkEpoch("incarnation " + party.id(), epoch, party.epoch()).thenReturn(party);
        });
    }

    private Mono<Boolean> otherSide(LeaseRow lease, boolean source, ApiPrincipal p) {
        if (p.role() != Role.ENGINE) {
            return Mono.just(p.role() == Role.AGENT);
        }
        return leases.party(source ? lease.targetId() : lease.donorId())
                .map(o -> o.owner().equals(p.subject()));
    }

    /** Whether the principal may attest quiescence of one side: its engine, a participating agent, or an operator. */
    Mono<Void> quiescenceWitness(LeaseRow lease, boolean source, ApiPrincipal p, @Nullable Long epoch) {
        return switch (p.role()) {
            case OPERATOR -> Mono.empty();
            case ENGINE -> engineSide(lease, source, p, epoch).then();
            case AGENT -> agent(lease, p, epoch);
            case ROUTER -> Mono.error(LeaseProblems.notAParty(lease.leaseId(), p.role()));
        };
    }

    private Mono<Void> agent(LeaseRow lease, ApiPrincipal p, @Nullable Long epoch) {
        Flux<String> hosts = Flux.concat(
                orders.agentHosts(lease.leaseId()),
                leases.party(lease.donorId()).map(LeaseStore.Party::hostId),
                leases.party(lease.targetId()).map(LeaseStore.Party::hostId));
        return hosts.collectList()
                .flatMap(list -> db.sql("""
                                SELECT host_id, agent_epoch FROM node_agent
                                WHERE owner_subject = :owner AND host_id = ANY(:hosts) ORDER BY host_id LIMIT 1
                                """)
                        .bind("owner", p.subject())
                        .bind("hosts", list.toArray(String[]::new))
                        .map((r, m) ->
                                java.util.Map.entry(r.get("host_id", String.class), r.get("agent_epoch", Long.class)))
                        .one())
                .switchIfEmpty(Mono.error(() -> LeaseProblems.noSuchLease(lease.leaseId())))
                .flatMap(a -> checkEpoch("agent of host " + a.getKey(), epoch, a.getValue()));
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
