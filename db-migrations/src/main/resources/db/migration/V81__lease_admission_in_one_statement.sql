-- Donor selection writes its PROPOSED leases before it answers the router, so every round trip of
-- that write is on the router's hot path. It took five (BEGIN, the advisory locks, the count, the
-- insert, COMMIT) and held the in-flight locks across three of them, so concurrent writers queued
-- behind each other's round trips. The lease package now writes a group of proposals in one
-- statement whose first step calls this function: it takes the in-flight locks (in the order given,
-- which the caller sorts, so writers never deadlock), counts the live leases of each party after the
-- locks are held (each query of a VOLATILE function sees a fresh snapshot, so a lease committed by
-- the writer it waited for is counted), and admits the proposals in order, each counting the ones
-- admitted before it. It answers, per proposal, whether it was admitted; it writes nothing (the
-- lease package's statement inserts the admitted leases and their PIN commands). The locks are
-- transaction-level: in autocommit they end with the calling statement, after its inserts.

CREATE FUNCTION kvreuse_admit_leases(
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
BEGIN
    FOREACH lock_key IN ARRAY lock_keys LOOP
        PERFORM pg_advisory_xact_lock(lock_class, lock_key);
    END LOOP;
    FOR proposal IN SELECT (e ->> 'donorId')::UUID AS donor,
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
            donor_live := donor_live + 1;
            target_live := target_live + 1;
        ELSE
            admitted := admitted || FALSE;
        END IF;
        donors := donors || jsonb_build_object(proposal.donor::TEXT, donor_live);
        targets := targets || jsonb_build_object(proposal.target::TEXT, target_live);
    END LOOP;
    RETURN admitted;
END;
$$;
