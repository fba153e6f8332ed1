package io.kvreuse.cleanup;

import io.kvreuse.incarnation.IncarnationState;
import io.kvreuse.incarnation.IncarnationView;
import io.kvreuse.lease.LeaseState;
import io.kvreuse.lease.LeaseView;
import io.kvreuse.lease.Leases;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.UUID;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;

/**
 * What cleanup of one incarnation would release now, and a fingerprint of it: the incarnation's
 * state and epoch, every unfinished lease's state and version, every live bank's epoch and counts. A plan whose fingerprint no longer matches is stale.
 */
@Component
class CleanupSnapshot {

    private final Leases leases;
    private final DatabaseClient db;

    CleanupSnapshot(Leases leases, DatabaseClient db) {
        this.leases = leases;
        this.db = db;
    }

    record Snapshot(
            IncarnationView incarnation,
            List<CleanupRecords.PlannedLease> leases,
            List<CleanupRecords.PlannedBank> banks,
            List<String> blockers,
            String fingerprint) {

        long pinnedBlocks() {
            return leases.stream()
                    .mapToLong(CleanupRecords.PlannedLease::pinnedBlocks)
                    .sum();
        }

        long destinationBlocks() {
            return leases.stream()
                    .mapToLong(CleanupRecords.PlannedLease::destinationBlocks)
                    .sum();
        }
    }

    Mono<Snapshot> of(IncarnationView inc) {
        UUID id = inc.incarnationId();
        Mono<List<CleanupRecords.PlannedBank>> banks = db.sql("""
                        SELECT b.bank_id, b.state, b.bank_epoch, count(k.seq_hash) AS blocks,
                               COALESCE(sum(k.pin_count), 0) AS pinned
                        FROM retained_bank b LEFT JOIN bank_block k ON k.bank_id = b.bank_id
                        WHERE b.incarnation_id = :id AND b.state <> 'DROPPED'
                        GROUP BY b.bank_id, b.state, b.bank_epoch ORDER BY b.bank_id
                        """)
                .bind("id", id)
                .map((r, m) -> new CleanupRecords.PlannedBank(
                        r.get("bank_id", UUID.class),
                        r.get("state", String.class),
                        r.get("bank_epoch", Long.class),
                        r.get("blocks", Long.class),
                        ((Number) r.get("pinned")).longValue()))
                .all()
                .collectList();
        // engines' quiescence evidence never covers a transfer part the agent has not finished
        Mono<java.util.Set<UUID>> agentOpen = db.sql("""
                        SELECT DISTINCT o.lease_id FROM lease l
                        JOIN transfer_order o ON o.lease_id = l.lease_id JOIN transfer_part p ON p.order_id = o.order_id
                        WHERE :id IN (l.donor_incarnation_id, l.target_incarnation_id)
                          AND l.state IN ('TRANSFERRING', 'UNCERTAIN') AND p.state NOT IN ('DONE', 'FAILED', 'QUIESCED')
                        """)
                .bind("id", id)
                .map((r, m) -> r.get("lease_id", UUID.class))
                .all()
                .collect(java.util.stream.Collectors.toSet());
        return Mono.zip(leases.ofIncarnation(id), banks, agentOpen).map(t -> {
            List<CleanupRecords.PlannedLease> planned = new ArrayList<>();
            List<String> blockers = new ArrayList<>();
            StringBuilder print = new StringBuilder(inc.state() + "@" + inc.fencingEpoch());
            for (LeaseView l : t.getT1()) {
                boolean donor = l.donorIncarnationId().equals(id);
                boolean proven = !l.state().mayBeWriting()
                        || (l.sourceQuiesced()
                                && l.destinationQuiesced()
                                && !t.getT3().contains(l.leaseId()));
                if (!proven) {
                    blockers.add("lease " + l.leaseId() + " is " + l.state() + ": its transfer is not proven quiesced");
                }
                List<LeaseView.Pin> pins = l.pins().stream()
                        .filter(p -> !p.state().equals("RELEASED"))
                        .toList();
                List<LeaseView.Destination> dests = l.destinations().stream()
                        .filter(d -> !d.state().equals("RELEASED"))
                        .toList();
                planned.add(new CleanupRecords.PlannedLease(
                        l.leaseId(),
                        l.state().name(),
                        donor ? "DONOR" : "TARGET",
                        pins.size(),
                        pins.stream().mapToLong(LeaseView.Pin::blocks).sum(),
                        dests.size(),
                        dests.stream()
                                .mapToLong(d -> d.slots().stream()
                                        .mapToLong(r -> r.get(1))
                                        .sum())
                                .sum(),
                        proven));
                print.append('|')
                        .append(l.leaseId())
                        .append(':')
                        .append(l.state())
                        .append(':')
                        .append(l.version());
            }
            for (CleanupRecords.PlannedBank b : t.getT2()) {
                // not the bank's publication state: it follows the owner's state asynchronously
                print.append("|bank:")
                        .append(b.bankId())
                        .append(':')
                        .append(b.bankEpoch())
                        .append(':')
                        .append(b.blocks())
                        .append(':')
                        .append(b.pinnedBlocks());
            }
            return new Snapshot(inc, planned, t.getT2(), blockers, sha256(print.toString()));
        });
    }

    /**
     * Whether cleanup may plan for the incarnation: only one that stopped being heard (SUSPECT,
     * LOST, RECLAIM_PENDING), or one that is gone (EXITED, RECLAIMED) but still has a live bank.
     * A live engine (REGISTERED, READY, DRAINING) is never planned for, whatever it holds.
     */
    static boolean plannable(IncarnationState state, Snapshot s) {
        return candidateState(state.name())
                || ((state == IncarnationState.EXITED || state == IncarnationState.RECLAIMED)
                        && !s.banks().isEmpty());
    }

    static boolean candidateState(String state) {
        return state.equals("SUSPECT") || state.equals("LOST") || state.equals("RECLAIM_PENDING");
    }

    static boolean unfinished(LeaseState s) {
        return !s.isTerminal();
    }

    private static String sha256(String s) {
        try {
            return HexFormat.of()
                    .formatHex(MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8)));
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
