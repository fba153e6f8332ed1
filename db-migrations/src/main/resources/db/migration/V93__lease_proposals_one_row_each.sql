-- The PROPOSED-lease write took the in-flight advisory locks of the group's parties and then, still
-- holding them, ran the end-of-statement work of everything the statement inserted: four
-- foreign-key checks per lease, two per PIN command, and the statement trigger of engine_command
-- whose pg_notify PostgreSQL serialises at commit. With few targets every writer takes the same
-- locks, so that work ran one group at a time.
--
-- A PROPOSED lease is now one row: its donor's PIN commands are issued when the donor polls (the
-- lease package's claim statement), and the proposal write wakes the donor's polls with a
-- notification of its own after it committed. The group is written by one call of this function:
-- its INSERT is a statement of its own, so its foreign-key checks end before the locks are taken;
-- then the locks, the admission (kvreuse_admit_proposals, V90, per proposal in order), the removal
-- of the rows of proposals over a cap (rare: selection's own counts spare the store most of them)
-- and the counters. What runs under the locks is the admission, the counters and the commit.
-- Arrays, one per column, in the group's order; each proposal's fetched hashes a slice of hashes
-- (from hash_from, hash_n of them); deadlines in epoch microseconds. Answers, per proposal, whether
-- it was admitted and written.

CREATE FUNCTION kvreuse_propose_leases(
    lease_ids UUID[], request_ids TEXT[], domains TEXT[], transports TEXT[], donors UUID[], donor_epochs BIGINT[],
    banks UUID[], bank_epochs BIGINT[], targets UUID[], target_epochs BIGINT[], local_prefix INTEGER[],
    hash_from INTEGER[], hash_n INTEGER[], hashes BIGINT[], slot_runs TEXT[], mm_lineages TEXT[], actions TEXT[],
    transfer_ms DOUBLE PRECISION[], recompute_ms DOUBLE PRECISION[], budgets BIGINT[], manifests INTEGER[],
    ttl BIGINT[], transfer_by BIGINT[], abandon_by BIGINT[],
    lock_class INTEGER, lock_keys INTEGER[], donor_cap INTEGER, target_cap INTEGER)
RETURNS BOOLEAN[] LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    admitted BOOLEAN[];
BEGIN
    INSERT INTO lease (lease_id, request_id, state, domain_id, donor_incarnation_id, donor_epoch, bank_id,
        bank_epoch, target_incarnation_id, target_epoch, local_prefix_blocks, fetch_blocks, seq_hashes,
        transport_class, predicted_transfer_ms, predicted_recompute_ms, budget_bytes, manifest_bytes,
        ttl_deadline, transfer_deadline, abandon_deadline, source_slot_runs, mm_lineage, action_type)
    SELECT lease_ids[i], request_ids[i], 'PROPOSED', domains[i], donors[i], donor_epochs[i], banks[i],
        bank_epochs[i], targets[i], target_epochs[i], local_prefix[i], hash_n[i],
        hashes[hash_from[i] + 1 : hash_from[i] + hash_n[i]], transports[i], transfer_ms[i], recompute_ms[i],
        budgets[i], manifests[i],
        TIMESTAMPTZ 'epoch' + ttl[i] * INTERVAL '1 microsecond',
        TIMESTAMPTZ 'epoch' + transfer_by[i] * INTERVAL '1 microsecond',
        TIMESTAMPTZ 'epoch' + abandon_by[i] * INTERVAL '1 microsecond',
        CAST(slot_runs[i] AS JSONB), mm_lineages[i], actions[i]
    FROM generate_subscripts(lease_ids, 1) AS i ORDER BY i;
    admitted := kvreuse_admit_proposals(donors, targets, lock_class, lock_keys, donor_cap, target_cap, FALSE, 0);
    IF FALSE = ANY(admitted) THEN
        DELETE FROM lease
        WHERE lease_id = ANY(ARRAY(SELECT lease_ids[i] FROM generate_subscripts(admitted, 1) AS i WHERE NOT admitted[i]));
    END IF;
    INSERT INTO lease_inflight (incarnation_id, side, admitted)
    SELECT x.party, x.side, count(*)
    FROM (SELECT donors[i] AS party, 'D' AS side FROM generate_subscripts(admitted, 1) AS i WHERE admitted[i]
          UNION ALL
          SELECT targets[i], 'T' FROM generate_subscripts(admitted, 1) AS i WHERE admitted[i]) AS x
    GROUP BY x.party, x.side ORDER BY x.party, x.side
    ON CONFLICT (incarnation_id, side) DO UPDATE SET admitted = lease_inflight.admitted + EXCLUDED.admitted;
    RETURN admitted;
END;
$$;
