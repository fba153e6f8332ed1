-- An experiment, never a migration of the product: kvreuse_ingest_batch with none of its bank_block
-- work, so that an ingestion run measures what the rest of the path costs (HTTP, the control plane,
-- the bank lock, the stream checks, the feed row, NOTIFY, the commit and every replica's index
-- apply). benchmarks/bank-page/ceiling.sh adds it as the last migration of a scratch build.

CREATE OR REPLACE FUNCTION kvreuse_ingest_batch(
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
    own_rows TID[];
    o_hashes BIGINT[];
    o_parents BIGINT[];
    o_positions INTEGER[];
    o_slots INTEGER[];
    o_lineages TEXT[];
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
    -- everything kvreuse_ingest_batch does to bank_block is left out: no removal by slot, no probe by
    -- hash, no insert, no agreement lookup. The last rank's batch is taken as agreed and becomes the
    -- feed row's STOREs, so the replicas' indexes still do their work.
    WITH input AS (
        SELECT * FROM unnest(p_hashes, p_parents, p_positions, p_slots, p_lineages)
                      AS t(seq_hash, parent_hash, position, slot, mm_lineage)
    ), upd AS (
        UPDATE bank_part SET last_event_id = p_last, native_clears = native_clears + p_clears, events_started = TRUE,
                             source_sequence = coalesce(p_source_sequence, source_sequence)
        WHERE bank_id = p_bank AND rank = p_rank
    ), agreement AS (
        SELECT i.seq_hash, parts.tp AS n, i.slot, i.position, i.parent_hash AS parent, i.mm_lineage AS lineage,
               TRUE AS agrees
        FROM input i WHERE p_rank = parts.tp - 1
    ), feed AS (
        SELECT kvreuse_feed_blocks(s.n, s.hashes, s.parents, s.positions, s.slots, s.lineages, '{}'::BIGINT[]) AS blocks
        FROM (SELECT count(*) AS n, array_agg(a.seq_hash) AS hashes, array_agg(a.parent) AS parents,
                     array_agg(a.position) AS positions, array_agg(a.slot) AS slots, array_agg(a.lineage) AS lineages
              FROM agreement a) s
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
           (SELECT count(*) FROM (SELECT pg_notify(p_channel, p_bank::TEXT || ':' || ap.seq::TEXT) FROM appended ap) x)
    INTO v_disagrees, v_notified;
    IF v_disagrees AND NOT bank.rank_disagreement THEN
        RAISE EXCEPTION 'no fast path: new disagreement' USING ERRCODE = 'KVR01';
    END IF;
    RETURN 1;
END;
$$;
