package io.kvreuse.system;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

/**
 * The DESIGN invariants (§3, §6), read from PostgreSQL after a scenario: pins, destination
 * allocations, fencing at grant time, the UNCERTAIN rule, releases, the audit trail and the
 * in-flight caps. Each rule is
 * one query returning the offending rows; all rules run in one snapshot, so a fleet still under
 * load is judged on a consistent state.
 */
final class Invariants {

    /** One DESIGN rule and the query listing every row that breaks it. */
    record Rule(String name, String offenders) {}

    /** Lease moves the state machine allows (DESIGN §3; PROPOSED → RELEASING when the TTL passes part-pinned). */
    static final String ALLOWED_MOVES = """
            (VALUES ('PROPOSED','SOURCE_PINNED'), ('PROPOSED','REFUSED'), ('PROPOSED','EXPIRED'), ('PROPOSED','FAILED'),
                    ('PROPOSED','RELEASING'), ('SOURCE_PINNED','TRANSFERRING'), ('SOURCE_PINNED','FAILED'),
                    ('SOURCE_PINNED','RELEASING'), ('TRANSFERRING','DELIVERED'), ('TRANSFERRING','FAILED'),
                    ('TRANSFERRING','UNCERTAIN'), ('DELIVERED','COMMITTED'), ('DELIVERED','FAILED'),
                    ('COMMITTED','RELEASING'), ('REFUSED','RELEASING'), ('FAILED','RELEASING'),
                    ('UNCERTAIN','FAILED'), ('RELEASING','RELEASED')) AS allowed(from_state, to_state)
            """;

    private static final String LEASE_MOVES = """
            (SELECT event_id, subject_id, epoch, from_state, to_state FROM audit_event
             WHERE subject_type = 'lease' AND action = 'TRANSITION')""";

    static final List<Rule> RULES = List.of(
            // a block's pin count is exactly the number of pins held or being released on it (a bank reset
            // empties the bank, so pins of an older bank epoch count on no block)
            new Rule("bank over-pinned (pin count above the pins held on the block)", pinCount(">")),
            new Rule("pin released twice (pin count below the pins held on the block)", pinCount("<")),
            new Rule("block pinned beyond its bank's capacity", """
                    SELECT b.bank_id, b.rank, count(*) AS pinned_blocks, k.capacity_blocks
                    FROM bank_block b JOIN retained_bank k USING (bank_id)
                    WHERE b.pin_count > 0 GROUP BY b.bank_id, b.rank, k.capacity_blocks
                    HAVING count(*) > k.capacity_blocks"""),
            new Rule("destination slots double-allocated (held slot runs overlap)", """
                    SELECT a.lease_id AS lease_a, b.lease_id AS lease_b, a.incarnation_id, a.rank, a.slots AS slots_a,
                           b.slots AS slots_b
                    FROM destination_slot_run a JOIN destination_slot_run b
                      ON a.incarnation_id = b.incarnation_id AND a.rank = b.rank AND a.slots && b.slots
                     AND a.ctid::text < b.ctid::text
                    WHERE a.held AND b.held"""),
            new Rule("destination slots double-allocated (held allocations overlap)", """
                    WITH runs AS (
                        SELECT d.lease_id, d.rank, d.incarnation_id,
                               int4range((r->>0)::int, (r->>0)::int + (r->>1)::int) AS slots, ord
                        FROM lease_destination d CROSS JOIN LATERAL jsonb_array_elements(d.slot_runs) WITH ORDINALITY AS x(r, ord)
                        WHERE d.state IN ('HELD', 'RELEASING'))
                    SELECT a.lease_id AS lease_a, b.lease_id AS lease_b, a.incarnation_id, a.rank, a.slots AS slots_a,
                           b.slots AS slots_b
                    FROM runs a JOIN runs b ON a.incarnation_id = b.incarnation_id AND a.rank = b.rank
                     AND a.slots && b.slots AND (a.lease_id::text, a.ord) < (b.lease_id::text, b.ord)"""),
            new Rule("destination allocation and its slot runs disagree", """
                    SELECT d.lease_id, d.rank, d.state, bool_or(s.held) AS runs_held, count(s.*) AS runs
                    FROM lease_destination d LEFT JOIN destination_slot_run s ON s.lease_id = d.lease_id AND s.rank = d.rank
                    GROUP BY d.lease_id, d.rank, d.state
                    HAVING count(s.*) = 0 OR bool_and(s.held) IS DISTINCT FROM bool_or(s.held)
                        OR bool_or(s.held) <> (d.state IN ('HELD', 'RELEASING'))"""),
            new Rule("lease granted on a fenced donor", grantedAfter("donor_incarnation_id", "donor_epoch", """
                    ('SOURCE_PINNED', 'TRANSFERRING', 'DELIVERED')""")),
            new Rule("lease granted on a fenced target", grantedAfter("target_incarnation_id", "target_epoch", """
                    ('DELIVERED', 'COMMITTED')""")),
            new Rule("lease granted on a stale bank epoch", """
                    SELECT l.lease_id, t.to_state AS granted, t.event_id, l.bank_id, l.bank_epoch, f.epoch AS bank_epoch_then
                    FROM lease l JOIN %s t ON t.subject_id = l.lease_id::text
                    JOIN audit_event f ON f.subject_type = 'bank' AND f.subject_id = l.bank_id::text
                     AND f.action = 'BANK_RESET' AND f.epoch > l.bank_epoch AND f.event_id < t.event_id
                    WHERE t.to_state IN ('SOURCE_PINNED', 'TRANSFERRING', 'DELIVERED')""".formatted(LEASE_MOVES)),
            new Rule("lease still active on a reclaimed incarnation", """
                    SELECT l.lease_id, l.state, i.incarnation_id, i.state AS incarnation_state
                    FROM lease l JOIN engine_incarnation i
                      ON i.incarnation_id IN (l.donor_incarnation_id, l.target_incarnation_id)
                    WHERE i.state = 'RECLAIMED'
                      AND l.state IN ('PROPOSED', 'SOURCE_PINNED', 'TRANSFERRING', 'DELIVERED', 'UNCERTAIN')"""),
            new Rule("UNCERTAIN lease released without quiescence evidence or operator cleanup", """
                    SELECT l.lease_id, t.event_id, t.to_state, l.state
                    FROM lease l JOIN %s t ON t.subject_id = l.lease_id::text
                    WHERE t.from_state = 'UNCERTAIN'
                      AND NOT (l.source_quiesced AND l.destination_quiesced)
                      AND NOT EXISTS (SELECT 1 FROM transfer_order o WHERE o.lease_id = l.lease_id
                            AND EXISTS (SELECT 1 FROM transfer_part p WHERE p.order_id = o.order_id)
                            AND NOT EXISTS (SELECT 1 FROM transfer_part p WHERE p.order_id = o.order_id
                                  AND p.state NOT IN ('DONE', 'FAILED', 'QUIESCED')))
                      AND NOT EXISTS (SELECT 1 FROM cleanup_plan c WHERE c.state = 'EXECUTED'
                            AND c.incarnation_id IN (l.donor_incarnation_id, l.target_incarnation_id))""".formatted(
                            LEASE_MOVES)),
            new Rule("terminal lease still holds a pin", """
                    SELECT l.lease_id, l.state, p.rank, p.state AS pin_state
                    FROM lease l JOIN lease_source_pin p USING (lease_id)
                    WHERE l.state IN ('RELEASED', 'EXPIRED') AND p.state NOT IN ('RELEASED', 'REFUSED')"""),
            new Rule("terminal lease still holds a destination allocation", """
                    SELECT l.lease_id, l.state, d.rank, d.state AS destination_state
                    FROM lease l JOIN lease_destination d USING (lease_id)
                    WHERE l.state IN ('RELEASED', 'EXPIRED') AND d.state <> 'RELEASED'"""),
            new Rule("lease released more than once", """
                    SELECT subject_id AS lease_id, to_state, count(*) AS times FROM %s t
                    WHERE to_state IN ('RELEASING', 'RELEASED', 'EXPIRED')
                    GROUP BY subject_id, to_state HAVING count(*) > 1""".formatted(LEASE_MOVES)),
            new Rule("lease transition missing from the audit trail", """
                    SELECT l.lease_id, l.state, l.version, count(t.epoch) AS audited, count(DISTINCT t.epoch) AS distinct_epochs,
                           min(t.epoch) AS first_epoch, max(t.epoch) AS last_epoch
                    FROM lease l LEFT JOIN %s t ON t.subject_id = l.lease_id::text
                    GROUP BY l.lease_id, l.state, l.version
                    HAVING count(t.epoch) <> l.version OR count(DISTINCT t.epoch) <> l.version
                        OR COALESCE(min(t.epoch), 1) <> 1 OR COALESCE(max(t.epoch), 0) <> l.version""".formatted(LEASE_MOVES)),
            new Rule("audited lease transitions do not chain to the lease's state", """
                    SELECT l.lease_id, l.state, l.version, t.epoch, t.from_state, t.to_state, p.to_state AS previous_to_state
                    FROM lease l JOIN %1$s t ON t.subject_id = l.lease_id::text
                    LEFT JOIN %1$s p ON p.subject_id = t.subject_id AND p.epoch = t.epoch - 1
                    WHERE (t.epoch = 1 AND t.from_state <> 'PROPOSED')
                       OR (t.epoch > 1 AND p.to_state IS DISTINCT FROM t.from_state)
                       OR (t.epoch = l.version AND t.to_state <> l.state)
                    UNION ALL
                    SELECT l.lease_id, l.state, l.version, NULL, NULL, NULL, NULL FROM lease l
                    WHERE l.version = 0 AND l.state <> 'PROPOSED'""".formatted(LEASE_MOVES)),
            new Rule("lease transition the state machine forbids", """
                    SELECT t.subject_id AS lease_id, t.event_id, t.from_state, t.to_state FROM %s t
                    WHERE NOT EXISTS (SELECT 1 FROM %s
                          WHERE allowed.from_state = t.from_state AND allowed.to_state = t.to_state)""".formatted(LEASE_MOVES, ALLOWED_MOVES)),
            new Rule("donor over its in-flight cap (maxInflightPerDonor)", overCap("donor", "maxInflightPerDonor")),
            new Rule("target over its in-flight cap (maxInflightPerTarget)", overCap("target", "maxInflightPerTarget")),
            new Rule(
                    "in-flight counter disagrees with the leases in flight (lease_inflight − lease_inflight_end)", """
                    WITH live AS (
                        SELECT incarnation_id, side, count(*) AS n
                        FROM (SELECT donor_incarnation_id AS incarnation_id, 'D' AS side, state FROM lease
                              UNION ALL SELECT target_incarnation_id, 'T', state FROM lease) AS parties
                        WHERE state IN ('PROPOSED', 'SOURCE_PINNED', 'TRANSFERRING', 'DELIVERED', 'UNCERTAIN', 'RELEASING')
                        GROUP BY incarnation_id, side),
                    kept AS (
                        SELECT i.incarnation_id, i.side, i.admitted - coalesce((SELECT sum(e.ended) FROM lease_inflight_end e
                               WHERE e.incarnation_id = i.incarnation_id AND e.side = i.side), 0) AS n
                        FROM lease_inflight i)
                    SELECT coalesce(l.incarnation_id, k.incarnation_id) AS incarnation_id, coalesce(l.side, k.side) AS side,
                           coalesce(l.n, 0) AS leases_in_flight, coalesce(k.n, 0) AS counter
                    FROM live l FULL JOIN kept k ON k.incarnation_id = l.incarnation_id AND k.side = l.side
                    WHERE coalesce(l.n, 0) <> coalesce(k.n, 0)"""),
            new Rule("audited transition of a lease that does not exist", """
                    SELECT t.subject_id, t.event_id, t.from_state, t.to_state FROM %s t
                    WHERE NOT EXISTS (SELECT 1 FROM lease l WHERE l.lease_id::text = t.subject_id)""".formatted(LEASE_MOVES)));

    private Invariants() {}

    /**
     * Fails with every violation and the ids of the offending rows. In autocommit mode the rules run
     * in one read-only REPEATABLE READ transaction; inside a caller's transaction they see its state.
     */
    static void assertHold(Connection c) {
        List<String> violations = violations(c);
        if (!violations.isEmpty()) {
            throw new AssertionError(
                    "DESIGN invariants violated (" + violations.size() + "):\n  " + String.join("\n  ", violations));
        }
    }

    /** Every violation as one line {@code rule: column=value, …}; empty when all rules hold. */
    static List<String> violations(Connection c) {
        try {
            if (!c.getAutoCommit()) {
                return check(c);
            }
            int isolation = c.getTransactionIsolation();
            c.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
            c.setAutoCommit(false);
            c.setReadOnly(true);
            try {
                return check(c);
            } finally {
                c.rollback();
                c.setReadOnly(false);
                c.setAutoCommit(true);
                c.setTransactionIsolation(isolation);
            }
        } catch (SQLException e) {
            throw new IllegalStateException("could not read the invariants from PostgreSQL", e);
        }
    }

    private static List<String> check(Connection c) throws SQLException {
        List<String> violations = new ArrayList<>();
        for (Rule rule : RULES) {
            try (Statement s = c.createStatement();
                    ResultSet rs = s.executeQuery(rule.offenders())) {
                ResultSetMetaData meta = rs.getMetaData();
                while (rs.next()) {
                    StringBuilder row = new StringBuilder(rule.name()).append(": ");
                    for (int i = 1; i <= meta.getColumnCount(); i++) {
                        row.append(i > 1 ? ", " : "")
                                .append(meta.getColumnLabel(i))
                                .append('=')
                                .append(rs.getString(i));
                    }
                    violations.add(row.toString());
                }
            }
        }
        return violations;
    }

    private static String pinCount(String comparison) {
        return """
                WITH live AS (
                    SELECT p.bank_id, p.rank, h AS seq_hash, count(*) AS pins, string_agg(p.lease_id::text, ' ') AS leases
                    FROM lease_source_pin p JOIN lease l USING (lease_id)
                    JOIN retained_bank k ON k.bank_id = p.bank_id AND k.bank_epoch = l.bank_epoch
                    CROSS JOIN LATERAL unnest(l.seq_hashes) AS h
                    WHERE p.state IN ('HELD', 'RELEASING')
                    GROUP BY p.bank_id, p.rank, h)
                SELECT b.bank_id, b.rank, b.seq_hash, b.slot, b.pin_count, COALESCE(live.pins, 0) AS pins_held, live.leases
                FROM bank_block b LEFT JOIN live USING (bank_id, rank, seq_hash)
                WHERE b.pin_count %s COALESCE(live.pins, 0)""".formatted(comparison);
    }

    /**
     * Parties with more live leases than the cap of the stored reuse settings, counted as selection
     * counts them (every state that may hold memory, and PROPOSED until its TTL). Only a party that
     * was granted a lease after the settings last changed is judged: lowering a cap at runtime
     * leaves the leases already granted alone, and only later grants must respect it.
     */
    private static String overCap(String side, String setting) {
        return """
                WITH cap AS (SELECT (settings->>'%2$s')::int AS cap, updated_at FROM reuse_settings WHERE id = 1),
                live AS (SELECT %1$s_incarnation_id AS incarnation_id, created_at FROM lease
                         WHERE state IN ('SOURCE_PINNED', 'TRANSFERRING', 'DELIVERED', 'UNCERTAIN', 'RELEASING')
                            OR (state = 'PROPOSED' AND ttl_deadline > now()))
                SELECT live.incarnation_id, count(*) AS live_leases, cap.cap
                FROM live CROSS JOIN cap
                GROUP BY live.incarnation_id, cap.cap, cap.updated_at
                HAVING count(*) > cap.cap AND max(live.created_at) >= cap.updated_at""".formatted(side, setting);
    }

    /** Forward moves of a lease made after one of its parties had already moved past the lease's epoch. */
    private static String grantedAfter(String party, String epoch, String grants) {
        return """
                SELECT l.lease_id, t.to_state AS granted, t.event_id, l.%1$s AS incarnation_id, l.%2$s AS lease_epoch,
                       f.epoch AS fenced_to, f.to_state AS fenced_state
                FROM lease l JOIN %3$s t ON t.subject_id = l.lease_id::text
                JOIN audit_event f ON f.subject_type = 'incarnation' AND f.subject_id = l.%1$s::text
                 AND f.action = 'TRANSITION' AND f.epoch > l.%2$s AND f.event_id < t.event_id
                WHERE t.to_state IN %4$s""".formatted(party, epoch, LEASE_MOVES, grants.strip());
    }
}
