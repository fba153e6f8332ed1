-- kvreuse_ingest_batch answers the feed row it appended (its sequence number and its blocks as
-- base64, the form the feed reads use), so the replica that made the call applies it to its index
-- at once instead of reading it back after the commit, and its NOTIFY names the calling replica
-- (p_origin), which then leaves its own notification alone (docs/design.md, "Inventory write path").
-- Everything the function checks, decides and writes is as in V94. It takes one argument more, so
-- it is a new function beside V94's; V94's signature stays, answering through the new one, for the
-- replicas of the previous release during a rolling upgrade (drop it once none runs).

CREATE OR REPLACE FUNCTION kvreuse_ingest_batch(
    p_bank UUID, p_rank INTEGER, p_subject TEXT, p_agent_host TEXT, p_first BIGINT, p_last BIGINT,
    p_hashes BIGINT[], p_parents BIGINT[], p_positions INTEGER[], p_slots INTEGER[], p_lineages TEXT[],
    p_removed BIGINT[], p_clears BIGINT, p_source_sequence BIGINT, p_max_slot INTEGER,
    p_expect_hashes BIGINT[], p_expect_positions INTEGER[],
    p_channel TEXT, p_lock_wait_ms TEXT, p_bound_ms TEXT, p_origin TEXT)
RETURNS TABLE (applied_seq BIGINT, applied_blocks TEXT) LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    bank RECORD;
    own RECORD;
    parts RECORD;
    part RECORD;
    g_hashes BIGINT[];
    g_slots INTEGER[];
    g_pins INTEGER[];
    own_rows TID[];
    o_hashes BIGINT[];
    o_parents BIGINT[];
    o_positions INTEGER[];
    o_slots INTEGER[];
    o_lineages TEXT[];
    v_disagrees BOOLEAN;
    v_notified BIGINT;
    v_seq BIGINT;
    v_blocks TEXT;
BEGIN
    PERFORM set_config('lock_timeout', p_lock_wait_ms, TRUE);
    SELECT capacity_blocks, state, unpublished_reason, rank_disagreement, incarnation_id INTO bank
    FROM retained_bank WHERE bank_id = p_bank FOR NO KEY UPDATE;
    PERFORM set_config('lock_timeout', p_bound_ms, TRUE);
    IF NOT FOUND OR bank.state = 'DROPPED' THEN
        RAISE EXCEPTION 'no fast path: bank' USING ERRCODE = 'KVR01';
    END IF;
    SELECT owner_subject, host_id, state INTO own FROM engine_incarnation WHERE incarnation_id = bank.incarnation_id;
    IF NOT coalesce((own.owner_subject = p_subject AND p_agent_host IS NULL) OR own.host_id = p_agent_host, FALSE)
    THEN
        RAISE EXCEPTION 'no fast path: caller' USING ERRCODE = 'KVR01';
    END IF;
    SELECT count(*) AS tp, bool_and(ready) AS all_ready, bool_or(needs_snapshot) AS any_gap INTO parts
    FROM bank_part WHERE bank_id = p_bank;
    SELECT last_event_id, needs_snapshot, events_started INTO part
    FROM bank_part WHERE bank_id = p_bank AND rank = p_rank;
    IF NOT FOUND OR part.needs_snapshot
       OR p_first <> (CASE WHEN NOT part.events_started AND p_first = 0 THEN -1 ELSE part.last_event_id END) + 1
       OR p_max_slot >= bank.capacity_blocks
       OR NOT kvreuse_publication_stays(bank.state, bank.unpublished_reason, parts.all_ready, parts.any_gap,
                                        bank.rank_disagreement, own.state) THEN
        RAISE EXCEPTION 'no fast path: stream or publication' USING ERRCODE = 'KVR01';
    END IF;
    IF cardinality(p_expect_hashes) > 0 AND EXISTS (
            SELECT 1 FROM unnest(p_expect_hashes, p_expect_positions) AS e(seq_hash, position)
            JOIN bank_block b ON b.bank_id = p_bank AND b.seq_hash = e.seq_hash AND b.rank = p_rank
            WHERE b.position <> e.position) THEN
        RAISE EXCEPTION 'no fast path: parents' USING ERRCODE = 'KVR01';
    END IF;

    -- What BankWrites.EVENTS does, in steps. Each lookup joins the batch's arrays to an index (a
    -- nested loop of index probes), never a filter "= ANY(array)" over a whole rank: inside a function
    -- the statements run on generic plans, where such a filter tests every row against every element.
    -- The removals come first, by slot and then by hash (a row goes with the first that finds it), so
    -- a pinned block among them is known before anything is inserted.
    WITH d AS (
        DELETE FROM bank_block b USING unnest(p_slots) AS s(slot)
        WHERE b.bank_id = p_bank AND b.rank = p_rank AND b.slot = s.slot
        RETURNING b.seq_hash, b.slot, b.pin_count
    )
    SELECT coalesce(array_agg(d.seq_hash), '{}'), coalesce(array_agg(d.slot), '{}'), coalesce(array_agg(d.pin_count), '{}')
    INTO g_hashes, g_slots, g_pins FROM d;
    -- one probe per hash the batch stores or removes, every rank's row of it (after the removals by
    -- slot: a block stored again at its own slot is gone by now): this rank's rows leave by row
    -- address below, the other ranks' rows of the stored hashes are what agreement compares with
    SELECT coalesce(array_agg(b.ctid) FILTER (WHERE b.rank = p_rank), '{}'),
           coalesce(array_agg(b.seq_hash) FILTER (WHERE b.rank <> p_rank AND h.stored), '{}'),
           coalesce(array_agg(b.parent_hash) FILTER (WHERE b.rank <> p_rank AND h.stored), '{}'),
           coalesce(array_agg(b.position) FILTER (WHERE b.rank <> p_rank AND h.stored), '{}'),
           coalesce(array_agg(b.slot) FILTER (WHERE b.rank <> p_rank AND h.stored), '{}'),
           coalesce(array_agg(b.mm_lineage) FILTER (WHERE b.rank <> p_rank AND h.stored), '{}')
    INTO own_rows, o_hashes, o_parents, o_positions, o_slots, o_lineages
    FROM (SELECT s.seq_hash, TRUE AS stored FROM unnest(p_hashes) AS s(seq_hash)
          UNION ALL SELECT r.seq_hash, FALSE FROM unnest(p_removed) AS r(seq_hash)) AS h
    JOIN bank_block b ON b.bank_id = p_bank AND b.seq_hash = h.seq_hash;
    IF cardinality(own_rows) > 0 THEN
        WITH d AS (
            DELETE FROM bank_block b WHERE b.ctid = ANY(own_rows)
            RETURNING b.seq_hash, b.slot, b.pin_count
        )
        SELECT g_hashes || coalesce(array_agg(d.seq_hash), '{}'), g_slots || coalesce(array_agg(d.slot), '{}'),
               g_pins || coalesce(array_agg(d.pin_count), '{}')
        INTO g_hashes, g_slots, g_pins FROM d;
    END IF;
    -- a pinned block may only stay where it is: stored again at its own slot
    IF EXISTS (SELECT 1 FROM unnest(g_hashes, g_slots, g_pins) AS g(seq_hash, slot, pin_count)
               LEFT JOIN unnest(p_hashes, p_slots) AS i(seq_hash, slot) ON i.seq_hash = g.seq_hash
               WHERE g.pin_count > 0 AND (i.slot IS NULL OR i.slot <> g.slot)) THEN
        RAISE EXCEPTION 'no fast path: pinned block' USING ERRCODE = 'KVR01';
    END IF;

    WITH input AS (
        SELECT * FROM unnest(p_hashes, p_parents, p_positions, p_slots, p_lineages)
                      AS t(seq_hash, parent_hash, position, slot, mm_lineage)
    ), gone AS (
        SELECT * FROM unnest(g_hashes, g_slots, g_pins) AS g(seq_hash, slot, pin_count)
    ), written AS (
        INSERT INTO bank_block (bank_id, rank, seq_hash, parent_hash, position, slot, mm_lineage, pin_count)
        SELECT p_bank, p_rank, i.seq_hash, i.parent_hash, i.position, i.slot, i.mm_lineage, coalesce(g.pin_count, 0)
        FROM input i LEFT JOIN gone g ON g.seq_hash = i.seq_hash
    ), upd AS (
        UPDATE bank_part SET last_event_id = p_last, native_clears = native_clears + p_clears, events_started = TRUE,
                             source_sequence = coalesce(p_source_sequence, source_sequence)
        WHERE bank_id = p_bank AND rank = p_rank
    ), held AS (
        SELECT * FROM unnest(o_hashes, o_parents, o_positions, o_slots, o_lineages)
                      AS o(seq_hash, parent_hash, position, slot, mm_lineage)
        UNION ALL
        SELECT i.seq_hash, i.parent_hash, i.position, i.slot, i.mm_lineage FROM input i
    ), agreement AS (
        SELECT h.seq_hash, count(*) AS n, min(h.slot) AS slot, min(h.position) AS position,
               min(h.parent_hash) AS parent, min(h.mm_lineage) AS lineage,
               min(h.slot) = max(h.slot) AND min(h.position) = max(h.position)
                   AND coalesce(min(h.parent_hash) = max(h.parent_hash), TRUE)
                   AND min(coalesce(h.mm_lineage, '')) = max(coalesce(h.mm_lineage, '')) AS agrees
        FROM held h GROUP BY h.seq_hash
    ), stores AS (
        SELECT a.seq_hash, a.parent, a.position, a.slot, a.lineage FROM agreement a WHERE a.n = parts.tp AND a.agrees
    ), removes AS (
        SELECT g.seq_hash FROM gone g LEFT JOIN agreement a ON a.seq_hash = g.seq_hash
        WHERE a.seq_hash IS NULL OR a.n <> parts.tp OR NOT a.agrees
    ), feed AS (
        SELECT kvreuse_feed_blocks(s.n + r.n, s.hashes, s.parents, s.positions, s.slots, s.lineages, r.hashes) AS blocks
        FROM (SELECT count(*) AS n, array_agg(x.seq_hash) AS hashes, array_agg(x.parent) AS parents,
                     array_agg(x.position) AS positions, array_agg(x.slot) AS slots, array_agg(x.lineage) AS lineages
              FROM stores x) s,
             (SELECT count(*) AS n, array_agg(y.seq_hash) AS hashes FROM removes y) r
    ), next AS (
        UPDATE retained_bank SET feed_seq = feed_seq + 1
        WHERE bank_id = p_bank AND (SELECT f.blocks FROM feed f) IS NOT NULL
        RETURNING feed_seq
    ), appended AS (
        INSERT INTO inventory_change (bank_id, seq, blocks)
        SELECT p_bank, n.feed_seq, (SELECT f.blocks FROM feed f) FROM next n
        RETURNING seq
    )
    SELECT EXISTS (SELECT 1 FROM agreement a WHERE a.n > 1 AND NOT a.agrees),
           (SELECT count(*) FROM (SELECT pg_notify(p_channel, p_bank::TEXT || ':' || ap.seq::TEXT || ':' || p_origin) FROM appended ap) x),
           (SELECT ap.seq FROM appended ap),
           (SELECT encode(f.blocks, 'base64') FROM feed f)
    INTO v_disagrees, v_notified, v_seq, v_blocks;
    IF v_disagrees AND NOT bank.rank_disagreement THEN
        RAISE EXCEPTION 'no fast path: new disagreement' USING ERRCODE = 'KVR01';
    END IF;
    -- the feed row this call appended (none when nothing changed eligibility), for the calling
    -- replica to apply without reading it back
    RETURN QUERY SELECT v_seq, CASE WHEN v_seq IS NULL THEN NULL ELSE v_blocks END;
END;
$$;

-- the previous release's call: twenty arguments, an INTEGER; its NOTIFY names no replica
CREATE OR REPLACE FUNCTION kvreuse_ingest_batch(
    p_bank UUID, p_rank INTEGER, p_subject TEXT, p_agent_host TEXT, p_first BIGINT, p_last BIGINT,
    p_hashes BIGINT[], p_parents BIGINT[], p_positions INTEGER[], p_slots INTEGER[], p_lineages TEXT[],
    p_removed BIGINT[], p_clears BIGINT, p_source_sequence BIGINT, p_max_slot INTEGER,
    p_expect_hashes BIGINT[], p_expect_positions INTEGER[],
    p_channel TEXT, p_lock_wait_ms TEXT, p_bound_ms TEXT)
RETURNS INTEGER LANGUAGE sql VOLATILE AS $$
    SELECT 1 FROM kvreuse_ingest_batch(p_bank, p_rank, p_subject, p_agent_host, p_first, p_last, p_hashes, p_parents,
                                       p_positions, p_slots, p_lineages, p_removed, p_clears, p_source_sequence,
                                       p_max_slot, p_expect_hashes, p_expect_positions, p_channel, p_lock_wait_ms,
                                       p_bound_ms, '');
$$;
