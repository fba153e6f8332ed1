-- A durable inventory batch took five round trips (BEGIN, SET LOCAL, the bank's lock and the rank's
-- part, the batch statement, COMMIT), each waiting for the control plane's event loop, with the
-- bank's row lock held across them. This function does the usual batch in one autocommitted call:
-- it locks the bank, checks everything the control plane checked after the lock, applies the batch
-- (the statement of BankWrites.applyEvents, feed row and NOTIFY included) and returns.
--
-- It applies only a batch whose outcome needs nothing else in its transaction: the caller may feed
-- the bank, the rank's part exists and has no gap, the batch starts right after the rank's last
-- applied event, every slot is inside the capacity, every parent stored earlier on the rank stands
-- one position above its child (the caller sends the positions it expects), no block is pinned, and
-- neither the publication nor the ranks' agreement flag changes. Anything else (a duplicate, a gap, a pinned block, a parent elsewhere, a
-- publication transition, a new disagreement, an unknown bank) raises SQLSTATE KVR01 before or after
-- the writes, so the whole call rolls back with nothing written, and the caller runs the batch
-- through its general transaction, which decides and reports it exactly as before.
--
-- The bank's row lock waits at most lock_wait_ms, every later lock at most bound_ms (lock_timeout,
-- SQLSTATE 55P03, which the caller reports as the store being unavailable).
--
-- Agreement is computed over the stored hashes only; see BankWrites.EVENTS for why a hash the batch
-- only removes needs no lookup on the other ranks.

CREATE FUNCTION kvreuse_publication_stays(
    state TEXT, reason TEXT, all_ready BOOLEAN, any_gap BOOLEAN, disagreement BOOLEAN, owner_state TEXT)
RETURNS BOOLEAN LANGUAGE sql IMMUTABLE AS $$
    -- Publication.decide(...).changed() is false; DROPPED banks never reach this
    SELECT CASE
        WHEN NOT coalesce(all_ready, FALSE) THEN state = 'PENDING' AND reason IS NULL
        ELSE (CASE WHEN coalesce(any_gap, FALSE) THEN 'EVENT_GAP'
                   WHEN disagreement THEN 'RANK_DISAGREEMENT'
                   WHEN owner_state IS DISTINCT FROM 'READY' THEN 'OWNER_NOT_READY' END) IS NOT DISTINCT FROM reason
             AND state = CASE WHEN coalesce(any_gap, FALSE) OR disagreement OR owner_state IS DISTINCT FROM 'READY'
                              THEN 'UNPUBLISHED' ELSE 'PUBLISHED' END
    END
$$;

CREATE FUNCTION kvreuse_ingest_batch(
    p_bank UUID, p_rank INTEGER, p_subject TEXT, p_agent_host TEXT, p_first BIGINT, p_last BIGINT,
    p_hashes BIGINT[], p_parents BIGINT[], p_positions INTEGER[], p_slots INTEGER[], p_lineages TEXT[],
    p_removed BIGINT[], p_clears BIGINT, p_source_sequence BIGINT, p_max_slot INTEGER,
    p_expect_hashes BIGINT[], p_expect_positions INTEGER[],
    p_channel TEXT, p_lock_wait_ms TEXT, p_bound_ms TEXT)
RETURNS INTEGER LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    bank RECORD;
    own RECORD;
    parts RECORD;
    part RECORD;
    g_hashes BIGINT[];
    g_slots INTEGER[];
    g_pins INTEGER[];
    v_disagrees BOOLEAN;
    v_notified BIGINT;
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
    WITH d AS (
        DELETE FROM bank_block b USING unnest(p_hashes || p_removed) AS h(seq_hash)
        WHERE b.bank_id = p_bank AND b.seq_hash = h.seq_hash AND b.rank = p_rank
        RETURNING b.seq_hash, b.slot, b.pin_count
    )
    SELECT g_hashes || coalesce(array_agg(d.seq_hash), '{}'), g_slots || coalesce(array_agg(d.slot), '{}'),
           g_pins || coalesce(array_agg(d.pin_count), '{}')
    INTO g_hashes, g_slots, g_pins FROM d;
    -- a pinned block may only stay where it is: stored again at its own slot
    IF EXISTS (SELECT 1 FROM unnest(g_hashes, g_slots, g_pins) AS g(seq_hash, slot, pin_count)
               LEFT JOIN unnest(p_hashes, p_slots) AS i(seq_hash, slot) ON i.seq_hash = g.seq_hash
               WHERE g.pin_count > 0 AND (i.slot IS NULL OR i.slot <> g.slot)) THEN
        RAISE EXCEPTION 'no fast path: pinned block' USING ERRCODE = 'KVR01';
    END IF;

    -- the other ranks' rows are read before this rank's are inserted (one snapshot for the statement)
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
        SELECT b.seq_hash, b.parent_hash, b.position, b.slot, b.mm_lineage
        FROM input i JOIN bank_block b ON b.bank_id = p_bank AND b.seq_hash = i.seq_hash AND b.rank <> p_rank
        UNION ALL
        SELECT i.seq_hash, i.parent_hash, i.position, i.slot, i.mm_lineage FROM input i
    ), agreement AS (
        SELECT h.seq_hash, count(*) AS n, min(h.slot) AS slot, min(h.position) AS position,
               min(h.parent_hash) AS parent, min(h.mm_lineage) AS lineage,
               min(h.slot) = max(h.slot) AND min(h.position) = max(h.position)
                   AND coalesce(min(h.parent_hash) = max(h.parent_hash), TRUE)
                   AND min(coalesce(h.mm_lineage, '')) = max(coalesce(h.mm_lineage, '')) AS agrees
        FROM held h GROUP BY h.seq_hash
    ), ops AS (
        SELECT 1 AS ord, json_build_array('STORE', a.seq_hash, a.parent, a.position, a.slot, a.lineage, 0) AS op
        FROM agreement a WHERE a.n = parts.tp AND a.agrees
        UNION ALL
        SELECT 2, json_build_array('REMOVE', g.seq_hash, NULL, 0, 0, NULL, 0)
        FROM gone g LEFT JOIN agreement a ON a.seq_hash = g.seq_hash
        WHERE a.seq_hash IS NULL OR a.n <> parts.tp OR NOT a.agrees
    ), feed AS (
        SELECT json_agg(o.op ORDER BY o.ord) AS ops FROM ops o
    ), next AS (
        UPDATE retained_bank SET feed_seq = feed_seq + 1
        WHERE bank_id = p_bank AND (SELECT f.ops FROM feed f) IS NOT NULL
        RETURNING feed_seq
    ), appended AS (
        INSERT INTO inventory_change (bank_id, seq, ops) SELECT p_bank, n.feed_seq, (SELECT f.ops FROM feed f) FROM next n
        RETURNING seq
    )
    SELECT EXISTS (SELECT 1 FROM agreement a WHERE a.n > 1 AND NOT a.agrees),
           (SELECT count(*) FROM (SELECT pg_notify(p_channel, p_bank::TEXT || ':' || ap.seq::TEXT) FROM appended ap) x)
    INTO v_disagrees, v_notified;
    IF v_disagrees AND NOT bank.rank_disagreement THEN
        RAISE EXCEPTION 'no fast path: new disagreement' USING ERRCODE = 'KVR01';
    END IF;
    RETURN 1;
END;
$$;
