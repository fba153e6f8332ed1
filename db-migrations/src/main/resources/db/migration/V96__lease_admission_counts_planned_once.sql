-- Every PROPOSED-lease write reads its donors' and targets' leases in flight. It did so through
-- kvreuse_leases_in_flight, a LANGUAGE sql function that PostgreSQL cannot inline (its body has
-- sub-selects) and, before release 18, parses, analyses and plans again in every statement that
-- calls it: twice per proposal write, about a quarter of a millisecond each, a third of what
-- PostgreSQL spent per selection (docs/selection-latency.md, "What PostgreSQL spends per
-- selection"). The admission now reads both counters of a side in one statement of its own, which
-- PL/pgSQL plans once per session; the function stays (the in-flight gauge and operators' queries
-- call it) and is PL/pgSQL too, so its statement is planned once per session as well. What is
-- read, and when (after the locks, each statement on a fresh snapshot), is unchanged.

CREATE OR REPLACE FUNCTION kvreuse_leases_in_flight(party UUID, party_side CHAR(1))
RETURNS BIGINT LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN CAST(coalesce((SELECT i.admitted FROM lease_inflight i WHERE i.incarnation_id = party AND i.side = party_side), 0)
              - coalesce((SELECT sum(e.ended) FROM lease_inflight_end e
                          WHERE e.incarnation_id = party AND e.side = party_side), 0)
                AS BIGINT);
END;
$$;

CREATE OR REPLACE FUNCTION kvreuse_admit_proposals(
    donors UUID[], targets UUID[], lock_class INTEGER, lock_keys INTEGER[], donor_cap INTEGER, target_cap INTEGER,
    all_or_none BOOLEAN, written_first BIGINT)
RETURNS BOOLEAN[] LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    lock_key INTEGER;
    donor_ids UUID[];
    donor_live BIGINT[];
    target_ids UUID[];
    target_live BIGINT[];
    admitted BOOLEAN[] := '{}';
    d INTEGER;
    t INTEGER;
BEGIN
    FOREACH lock_key IN ARRAY lock_keys LOOP
        PERFORM pg_advisory_xact_lock(lock_class, lock_key);
    END LOOP;
    SELECT array_agg(x.p), array_agg(CAST(coalesce(c.admitted, 0) - coalesce(e.ended, 0) AS BIGINT))
    INTO donor_ids, donor_live
    FROM (SELECT DISTINCT unnest(donors) AS p) AS x
    LEFT JOIN lease_inflight c ON c.incarnation_id = x.p AND c.side = 'D'
    LEFT JOIN LATERAL (SELECT sum(s.ended) AS ended FROM lease_inflight_end s
                       WHERE s.incarnation_id = x.p AND s.side = 'D') AS e ON TRUE;
    SELECT array_agg(x.p), array_agg(CAST(coalesce(c.admitted, 0) - coalesce(e.ended, 0) AS BIGINT))
    INTO target_ids, target_live
    FROM (SELECT DISTINCT unnest(targets) AS p) AS x
    LEFT JOIN lease_inflight c ON c.incarnation_id = x.p AND c.side = 'T'
    LEFT JOIN LATERAL (SELECT sum(s.ended) AS ended FROM lease_inflight_end s
                       WHERE s.incarnation_id = x.p AND s.side = 'T') AS e ON TRUE;
    FOR i IN 1 .. coalesce(array_length(donors, 1), 0) LOOP
        d := array_position(donor_ids, donors[i]);
        t := array_position(target_ids, targets[i]);
        IF donor_live[d] < donor_cap AND target_live[t] < target_cap THEN
            admitted := admitted || TRUE;
            donor_live[d] := donor_live[d] + 1;
            target_live[t] := target_live[t] + 1;
        ELSIF all_or_none THEN
            RAISE EXCEPTION USING ERRCODE = 'KV001', MESSAGE = 'a proposal of the group is over its in-flight cap';
        ELSE
            admitted := admitted || FALSE;
        END IF;
    END LOOP;
    RETURN admitted;
END;
$$;

-- A lease's fetched hashes (2 KB for 256 blocks) are random 64-bit numbers: PostgreSQL's attempt to
-- compress them never succeeds (about 1 % of its CPU under selections), and moving them out of line
-- cost every PROPOSED lease two more heap rows and two index entries in the lease table's TOAST
-- relation. They are kept in the row, uncompressed, up to the size of a page; a larger hint's
-- hashes (above about 1,000 blocks) still go out of line.
ALTER TABLE lease ALTER COLUMN seq_hashes SET STORAGE EXTERNAL;
ALTER TABLE lease SET (toast_tuple_target = 8160);
