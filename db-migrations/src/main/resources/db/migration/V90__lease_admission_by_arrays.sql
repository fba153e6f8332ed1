-- The PROPOSED-lease write carried each group of proposals as one JSON document (each proposal with
-- its fetched hashes: about 5 KB a proposal, 1.3 MB for a group of 256) that PostgreSQL parsed into
-- JSONB (every hash a numeric), walked once for the admission and again to build the rows, all
-- while the group held its parties' in-flight locks. The statement now binds one array per column
-- (the hashes of the whole group as one BIGINT[], each proposal a slice of it), and admission takes
-- just the parties, in the same order.
--
-- Same contract as kvreuse_admit_leases (V81, V82): takes the in-flight locks in the order given
-- (the caller sorts them, so writers never deadlock), reads each party's leases in flight from its
-- counters once the locks are held (a query of a VOLATILE function takes a fresh snapshot, so the
-- admissions of the writer it waited for are counted), admits the proposals in order, each counting
-- the ones admitted before it, and writes nothing. kvreuse_admit_leases stays for replicas that
-- still call it.
--
-- The in-flight locks are held until the statement commits, so whatever the statement does after
-- taking them serialises every writer of the same parties (with few targets, every writer). A
-- caller may therefore insert a group first and take the locks last, passing what it inserted as
-- written_first (only so that PostgreSQL evaluates those inserts before calling this function):
-- with all_or_none, a group that does not fit entirely raises SQLSTATE KV001, which undoes the
-- statement, and the caller writes the group again with the locks taken first.

CREATE FUNCTION kvreuse_admit_proposals(
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
    SELECT array_agg(p), array_agg(kvreuse_leases_in_flight(p, 'D'))
    INTO donor_ids, donor_live FROM (SELECT DISTINCT unnest(donors) AS p) AS x;
    SELECT array_agg(p), array_agg(kvreuse_leases_in_flight(p, 'T'))
    INTO target_ids, target_live FROM (SELECT DISTINCT unnest(targets) AS p) AS x;
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
