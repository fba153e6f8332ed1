-- Donor selection writes its PROPOSED leases before it answers the router, so every round trip of
-- that write is on the router's hot path. It took five (BEGIN, the advisory locks, the count, the
-- insert, COMMIT) and held the in-flight locks across three of them, so concurrent writers queued
-- behind each other's round trips. This function does the same work in one statement: it takes the
-- in-flight locks (in the order given, which the caller sorts, so writers never deadlock), counts the
-- live leases of each party after the locks are held (each statement of a VOLATILE function sees a
-- fresh snapshot, so a lease committed by the writer it waited for is counted), admits the proposals
-- in order, each counting the ones admitted before it, and inserts the admitted leases and their
-- donors' PIN commands (one per donor rank, visible at once). It answers, per proposal, whether it
-- was admitted. The locks are transaction-level: called in autocommit, they end with the statement.

CREATE FUNCTION kvreuse_propose_leases(
    plans JSONB, lock_class INTEGER, lock_keys INTEGER[], donor_cap INTEGER, target_cap INTEGER,
    as_of TIMESTAMPTZ)
RETURNS BOOLEAN[] LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    lock_key INTEGER;
    proposal RECORD;
    donors JSONB := '{}';
    targets JSONB := '{}';
    donor_live INTEGER;
    target_live INTEGER;
    admitted BOOLEAN[] := '{}';
    admitted_ids UUID[] := '{}';
BEGIN
    FOREACH lock_key IN ARRAY lock_keys LOOP
        PERFORM pg_advisory_xact_lock(lock_class, lock_key);
    END LOOP;
    FOR proposal IN SELECT (e ->> 'leaseId')::UUID AS lease_id, (e ->> 'donorId')::UUID AS donor,
                        (e ->> 'targetId')::UUID AS target
                    FROM jsonb_array_elements(plans) WITH ORDINALITY AS x(e, ord)
                    ORDER BY x.ord LOOP
        donor_live := (donors ->> proposal.donor::TEXT)::INTEGER;
        IF donor_live IS NULL THEN
            SELECT count(*) INTO donor_live FROM (SELECT 1 FROM lease
                WHERE donor_incarnation_id = proposal.donor
                  AND state IN ('PROPOSED', 'SOURCE_PINNED', 'TRANSFERRING', 'DELIVERED', 'UNCERTAIN', 'RELEASING')
                  AND (state <> 'PROPOSED' OR ttl_deadline > as_of)
                LIMIT donor_cap) AS live;
        END IF;
        target_live := (targets ->> proposal.target::TEXT)::INTEGER;
        IF target_live IS NULL THEN
            SELECT count(*) INTO target_live FROM (SELECT 1 FROM lease
                WHERE target_incarnation_id = proposal.target
                  AND state IN ('PROPOSED', 'SOURCE_PINNED', 'TRANSFERRING', 'DELIVERED', 'UNCERTAIN', 'RELEASING')
                  AND (state <> 'PROPOSED' OR ttl_deadline > as_of)
                LIMIT target_cap) AS live;
        END IF;
        IF donor_live < donor_cap AND target_live < target_cap THEN
            admitted := admitted || TRUE;
            admitted_ids := admitted_ids || proposal.lease_id;
            donor_live := donor_live + 1;
            target_live := target_live + 1;
        ELSE
            admitted := admitted || FALSE;
        END IF;
        donors := donors || jsonb_build_object(proposal.donor::TEXT, donor_live);
        targets := targets || jsonb_build_object(proposal.target::TEXT, target_live);
    END LOOP;
    IF cardinality(admitted_ids) = 0 THEN
        RETURN admitted;
    END IF;
    WITH plan AS (
        SELECT * FROM jsonb_to_recordset(plans) AS x("leaseId" UUID, "requestId" TEXT,
            "domainId" TEXT, "transportClass" TEXT, "donorId" UUID, "donorEpoch" BIGINT, "bankId" UUID,
            "bankEpoch" BIGINT, "targetId" UUID, "targetEpoch" BIGINT, "localPrefixBlocks" INTEGER,
            "fetchedHashes" BIGINT[], "slotRuns" INTEGER[], "mmLineage" TEXT, "actionType" TEXT,
            "transferMs" DOUBLE PRECISION, "recomputeMs" DOUBLE PRECISION, "budgetBytes" BIGINT,
            "manifestBytes" INTEGER, "ttlDeadline" TIMESTAMPTZ, "transferDeadline" TIMESTAMPTZ,
            "abandonDeadline" TIMESTAMPTZ)
        WHERE x."leaseId" = ANY (admitted_ids)),
    proposed AS (
        INSERT INTO lease (lease_id, request_id, state, domain_id, donor_incarnation_id, donor_epoch, bank_id,
            bank_epoch, target_incarnation_id, target_epoch, local_prefix_blocks, fetch_blocks, seq_hashes,
            transport_class, predicted_transfer_ms, predicted_recompute_ms, budget_bytes, manifest_bytes,
            ttl_deadline, transfer_deadline, abandon_deadline, source_slot_runs, mm_lineage, action_type)
        SELECT "leaseId", "requestId", 'PROPOSED', "domainId", "donorId", "donorEpoch", "bankId", "bankEpoch",
            "targetId", "targetEpoch", "localPrefixBlocks", cardinality("fetchedHashes"), "fetchedHashes",
            "transportClass", "transferMs", "recomputeMs", "budgetBytes", "manifestBytes", "ttlDeadline",
            "transferDeadline", "abandonDeadline",
            (SELECT COALESCE(jsonb_agg(jsonb_build_array("slotRuns"[i], "slotRuns"[i + 1]) ORDER BY i), '[]')
             FROM generate_series(1, cardinality("slotRuns"), 2) AS i),
            "mmLineage", "actionType"
        FROM plan
        RETURNING lease_id, donor_incarnation_id, created_at)
    INSERT INTO engine_command (command_id, incarnation_id, lease_id, type, rank, created_at, visible_at)
    SELECT gen_random_uuid(), l.donor_incarnation_id, l.lease_id, 'PIN', r.rank, l.created_at, '-infinity'
    FROM proposed l JOIN incarnation_rank r ON r.incarnation_id = l.donor_incarnation_id;
    RETURN admitted;
END;
$$;
