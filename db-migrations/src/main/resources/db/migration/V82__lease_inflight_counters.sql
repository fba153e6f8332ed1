-- The in-flight caps were checked by counting each party's live leases under its advisory lock, on
-- every proposal write. That count grows with the leases in flight: at 1,000 selections/s with a
-- five-second lease TTL, a target has over a thousand live PROPOSED leases, counting them took about a
-- millisecond per party, and every proposal write of a target waited for the one before it, so the
-- write's time, and with it every router's answer, grew with the load until each hit its deadline.
--
-- The leases in flight per party are now kept as counters, written by the two statements that change
-- them, so admission reads a few rows instead of counting leases:
--   * lease_inflight: leases a party was admitted, ever; only the proposal write adds to it, under
--     the party's advisory lock (so the lock still orders admissions, across replicas);
--   * lease_inflight_end: leases of a party that left the in-flight states, added by the lease
--     writer's statement in the same transaction as the move. It is split into shards (the writer
--     picks one per statement), so concurrent lease transactions of one party rarely wait on each
--     other's row, and never on the proposal write's.
-- A party's leases in flight = admitted − the sum of its ended shards = the count of its leases in
-- PROPOSED, SOURCE_PINNED, TRANSFERRING, DELIVERED, UNCERTAIN or RELEASING. A PROPOSED lease past its
-- TTL counts until the sweeper expires it (every sweep interval): the safe side of a cap.

CREATE TABLE lease_inflight (
    incarnation_id UUID    NOT NULL,
    side           CHAR(1) NOT NULL CHECK (side IN ('D', 'T')),
    admitted       BIGINT  NOT NULL,
    PRIMARY KEY (incarnation_id, side)
);

CREATE TABLE lease_inflight_end (
    incarnation_id UUID     NOT NULL,
    side           CHAR(1)  NOT NULL CHECK (side IN ('D', 'T')),
    shard          SMALLINT NOT NULL,
    ended          BIGINT   NOT NULL,
    PRIMARY KEY (incarnation_id, side, shard)
);

INSERT INTO lease_inflight (incarnation_id, side, admitted)
SELECT donor_incarnation_id, 'D', count(*) FROM lease
WHERE state IN ('PROPOSED', 'SOURCE_PINNED', 'TRANSFERRING', 'DELIVERED', 'UNCERTAIN', 'RELEASING')
GROUP BY donor_incarnation_id
UNION ALL
SELECT target_incarnation_id, 'T', count(*) FROM lease
WHERE state IN ('PROPOSED', 'SOURCE_PINNED', 'TRANSFERRING', 'DELIVERED', 'UNCERTAIN', 'RELEASING')
GROUP BY target_incarnation_id;

-- A party's leases in flight on one side ('D' donor, 'T' target), from its counters.
CREATE FUNCTION kvreuse_leases_in_flight(party UUID, party_side CHAR(1))
RETURNS BIGINT LANGUAGE sql STABLE AS $$
    SELECT CAST(coalesce((SELECT i.admitted FROM lease_inflight i WHERE i.incarnation_id = party AND i.side = party_side), 0)
         - coalesce((SELECT sum(e.ended) FROM lease_inflight_end e WHERE e.incarnation_id = party AND e.side = party_side), 0)
           AS BIGINT)
$$;

-- Same signature and contract as V81 (locks in the order given, admits in order, writes nothing);
-- a party's leases in flight are read from the counters once its lock is held. Each query of a
-- VOLATILE function sees a fresh snapshot, so the admissions of the writer it waited for are counted;
-- an end committed after that snapshot is not yet subtracted, which only over-counts.
CREATE OR REPLACE FUNCTION kvreuse_admit_leases(
    plans JSONB, lock_class INTEGER, lock_keys INTEGER[], donor_cap INTEGER, target_cap INTEGER,
    as_of TIMESTAMPTZ)
RETURNS BOOLEAN[] LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    lock_key INTEGER;
    proposal RECORD;
    donors JSONB := '{}';
    targets JSONB := '{}';
    donor_live BIGINT;
    target_live BIGINT;
    admitted BOOLEAN[] := '{}';
BEGIN
    FOREACH lock_key IN ARRAY lock_keys LOOP
        PERFORM pg_advisory_xact_lock(lock_class, lock_key);
    END LOOP;
    FOR proposal IN SELECT (e ->> 'donorId')::UUID AS donor,
                        (e ->> 'targetId')::UUID AS target
                    FROM jsonb_array_elements(plans) WITH ORDINALITY AS x(e, ord)
                    ORDER BY x.ord LOOP
        donor_live := (donors ->> proposal.donor::TEXT)::BIGINT;
        IF donor_live IS NULL THEN
            donor_live := kvreuse_leases_in_flight(proposal.donor, 'D');
        END IF;
        target_live := (targets ->> proposal.target::TEXT)::BIGINT;
        IF target_live IS NULL THEN
            target_live := kvreuse_leases_in_flight(proposal.target, 'T');
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
