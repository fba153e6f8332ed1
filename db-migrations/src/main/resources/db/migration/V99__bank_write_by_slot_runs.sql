-- kvreuse_bank_write moves a batch's stores into the pages by runs of consecutive slots instead of
-- element by element (docs/ingestion-throughput.md, "Slot runs"). The caller names the runs in
-- p_runs: triples (first store's index in the batch's arrays, from 1; its slot; length), in slot
-- order, each inside one page, store index + t at slot + t, every store in exactly one run. An
-- engine fills its blocks mostly in consecutive slots, so a batch of a few thousand stores is a few
-- dozen runs: each is one array-slice assignment per column, and the other ranks' agreement is
-- checked by comparing slices, per element only where a slice differs and a hash meets its own.
-- What the function decides is unchanged (V98): the same checks, refusals, pins, agreement and feed.
-- Called without runs (a replica of the previous release during a rolling upgrade), the function
-- finds them itself (kvreuse_slot_runs). kvreuse_ingest_batch passes the runs through; both keep V98's arguments in front.

DROP FUNCTION kvreuse_ingest_batch(UUID, INTEGER, TEXT, TEXT, BIGINT, BIGINT, BIGINT[], BIGINT[], INTEGER[], INTEGER[],
                                   TEXT[], BIGINT[], BIGINT, BIGINT, INTEGER, BIGINT, BIGINT[], INTEGER[], BOOLEAN,
                                   TEXT, TEXT, TEXT, TEXT);
DROP FUNCTION kvreuse_bank_write(UUID, INTEGER, INTEGER, BIGINT[], BIGINT[], INTEGER[], INTEGER[], TEXT[], BIGINT[],
                                 BIGINT, BIGINT[], INTEGER[], BOOLEAN, TEXT, TEXT, TEXT);

-- the runs of a caller that names none, found here: a run breaks where the slot or the store index
-- does not follow the previous one, or a page starts
CREATE FUNCTION kvreuse_slot_runs(p_slots INTEGER[]) RETURNS INTEGER[] LANGUAGE sql IMMUTABLE AS $$
    SELECT coalesce(array_agg(x.v ORDER BY r.first_slot, x.k), '{}')
    FROM (SELECT min(q.i)::INTEGER AS first_i, min(q.slot) AS first_slot, count(*)::INTEGER AS len
          FROM (SELECT b.slot, b.i, sum(b.starts) OVER (ORDER BY b.slot) AS run
                FROM (SELECT t.slot, t.i,
                             CASE WHEN t.slot % 256 <> 0 AND t.slot = lag(t.slot) OVER w + 1 AND t.i = lag(t.i) OVER w + 1
                                  THEN 0 ELSE 1 END AS starts
                      FROM unnest(p_slots) WITH ORDINALITY AS t(slot, i) WINDOW w AS (ORDER BY t.slot)) AS b) AS q
          GROUP BY q.run) AS r
    CROSS JOIN LATERAL unnest(ARRAY[r.first_i, r.first_slot, r.len]) WITH ORDINALITY AS x(v, k);
$$;

CREATE FUNCTION kvreuse_bank_write(
    p_bank UUID, p_rank INTEGER, p_tp INTEGER,
    p_hashes BIGINT[], p_parents BIGINT[], p_positions INTEGER[], p_slots INTEGER[], p_lineages TEXT[],
    p_removed BIGINT[], p_version BIGINT, p_own_hashes BIGINT[], p_own_slots INTEGER[],
    p_misplaced BOOLEAN, p_channel TEXT, p_payload TEXT, p_suffix TEXT, p_runs INTEGER[] DEFAULT NULL)
RETURNS TABLE (pinned BIGINT, disagrees BOOLEAN, applied_seq BIGINT, applied_blocks TEXT)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    n INTEGER := coalesce(cardinality(p_hashes), 0);
    runs INTEGER[] := coalesce(p_runs, kvreuse_slot_runs(p_slots));
    nruns INTEGER;
    own_slots INTEGER[] := coalesce(p_own_slots, '{}');
    empty_slots INTEGER[] := '{}';
    clear_slots INTEGER[];
    pages INTEGER[];
    locked INTEGER;
    created BOOLEAN := FALSE;
    written INTEGER := 0;
    touched_pins BOOLEAN;
    any_lineage BOOLEAN := FALSE;
    page_pins BOOLEAN;
    falses BOOLEAN[] := array_fill(FALSE, ARRAY[256]);
    v_pinned BIGINT;
    agreed BOOLEAN[];
    v_disagrees BOOLEAN := coalesce(p_misplaced, FALSE);
    seen INTEGER;
    pg INTEGER;
    k INTEGER;
    r INTEGER;
    c INTEGER;
    i INTEGER;
    ie INTEGER;
    j INTEGER;
    e INTEGER;
    len INTEGER;
    ci INTEGER := 1;
    ri INTEGER := 1;
    hs BIGINT[];
    ps BIGINT[];
    pos INTEGER[];
    lin TEXT[];
    pin INTEGER[];
    old_h BIGINT[] := '{}';
    old_p INTEGER[] := '{}';
    differ INTEGER[];
    mine BIGINT[];
    theirs BIGINT[];
    o RECORD;
    s_hashes BIGINT[] := '{}';
    s_parents BIGINT[] := '{}';
    s_positions INTEGER[] := '{}';
    s_slots INTEGER[] := '{}';
    s_lineages TEXT[] := '{}';
    r_hashes BIGINT[];
    v_blocks BYTEA;
    v_seq BIGINT;
BEGIN
    IF p_lineages IS NULL THEN
        p_lineages := array_fill(NULL::TEXT, ARRAY[n]);
    ELSE
        any_lineage := cardinality(array_remove(p_lineages, NULL)) > 0;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM bank_part p WHERE p.bank_id = p_bank AND p.rank = p_rank AND p.page_version = p_version) THEN
        RAISE EXCEPTION 'stale rank map' USING ERRCODE = 'KVR02';
    END IF;
    nruns := cardinality(runs) / 3;
    -- the slots to empty: this rank's old slots of the hashes it stores or removes that no store
    -- overwrites; the pages are those and the runs'
    IF cardinality(own_slots) > 0 THEN
        SELECT coalesce(array_agg(x.slot ORDER BY x.slot), '{}') INTO empty_slots
        FROM (SELECT unnest(own_slots) EXCEPT SELECT unnest(p_slots)) AS x(slot);
    END IF;
    SELECT coalesce(array_agg(DISTINCT x.slot / 256 ORDER BY x.slot / 256), '{}') INTO pages
    FROM (SELECT runs[3 * t - 1] FROM generate_series(1, nruns) AS t UNION ALL SELECT unnest(empty_slots)) AS x(slot);
    -- the pages locked, and whether they hold pins; those missing created, then locked with the rest
    -- (kvreuse_bank_ensure_pages is an SQL function, planned again at every call: only called when a
    -- page is missing, which is rare)
    LOOP
        SELECT count(*), coalesce(bool_or(0 <> ANY(l.pins)), FALSE) INTO locked, touched_pins
        FROM (SELECT g.pins FROM bank_page g WHERE g.bank_id = p_bank AND g.rank = p_rank AND g.page = ANY(pages)
              ORDER BY g.page FOR NO KEY UPDATE) AS l;
        EXIT WHEN locked >= cardinality(pages) OR created;
        PERFORM kvreuse_bank_ensure_pages(p_bank, p_rank, pages);
        created := TRUE;
    END LOOP;
    -- the map's slots are where the pages hold those hashes (the versions say so; this is the check)
    IF cardinality(own_slots) > 0 THEN
        IF EXISTS (SELECT 1 FROM unnest(p_own_hashes, p_own_slots) AS m(seq_hash, slot)
                   LEFT JOIN bank_page g ON g.bank_id = p_bank AND g.rank = p_rank AND g.page = m.slot / 256
                   WHERE g.page IS NULL OR g.positions[m.slot % 256 + 1] < 0
                      OR g.hashes[m.slot % 256 + 1] <> m.seq_hash) THEN
            RAISE EXCEPTION 'rank map disagrees with the pages' USING ERRCODE = 'KVR02';
        END IF;
    END IF;

    -- a pinned block may only stay where it is: stored again at its own slot (looked for only when
    -- a page the batch touches holds a pin, which is rare: pins live while a transfer reads)
    IF touched_pins THEN
        SELECT coalesce(array_agg(DISTINCT x.slot), '{}') INTO clear_slots
        FROM (SELECT unnest(p_slots) UNION ALL SELECT unnest(own_slots)) AS x(slot);
        SELECT min(g.hashes[x.slot % 256 + 1]) INTO v_pinned
        FROM bank_page g JOIN unnest(clear_slots) AS x(slot) ON x.slot / 256 = g.page
        WHERE g.bank_id = p_bank AND g.rank = p_rank AND g.page = ANY(pages)
          AND g.positions[x.slot % 256 + 1] >= 0 AND g.pins[x.slot % 256 + 1] > 0
          AND NOT EXISTS (SELECT 1 FROM unnest(p_hashes, p_slots) AS t(seq_hash, slot)
                          WHERE t.seq_hash = g.hashes[x.slot % 256 + 1] AND t.slot = x.slot);
        IF v_pinned IS NOT NULL THEN
            RETURN QUERY SELECT v_pinned, FALSE, NULL::BIGINT, NULL::TEXT;
            RETURN;
        END IF;
    END IF;

    -- the pages, one at a time in ascending order: empty the slots, then write the runs (pins stay
    -- with a block stored again at its own slot, the only move of a pinned block allowed); what the
    -- emptied and overwritten slots held is kept (old_h, with its positions in old_p) for the feed
    agreed := array_fill(TRUE, ARRAY[n]);
    FOREACH pg IN ARRAY pages LOOP
        SELECT g.hashes, g.parents, g.positions, g.lineages, g.pins INTO hs, ps, pos, lin, pin
        FROM bank_page g WHERE g.bank_id = p_bank AND g.rank = p_rank AND g.page = pg;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'bank % rank % has no page %', p_bank, p_rank, pg;
        END IF;
        page_pins := 0 <> ANY(pin);
        WHILE ci <= cardinality(empty_slots) AND empty_slots[ci] / 256 = pg LOOP
            j := empty_slots[ci] % 256 + 1;
            old_h := old_h || hs[j];
            old_p := old_p || pos[j];
            hs[j] := 0; ps[j] := NULL; pos[j] := -1; pin[j] := 0;
            IF lin IS NOT NULL THEN
                lin[j] := NULL;
            END IF;
            ci := ci + 1;
        END LOOP;
        k := ri;
        WHILE ri <= nruns AND runs[3 * ri - 1] / 256 = pg LOOP
            i := runs[3 * ri - 2];
            len := runs[3 * ri];
            ie := i + len - 1;
            j := runs[3 * ri - 1] % 256 + 1;
            e := j + len - 1;
            old_h := old_h || hs[j:e];
            old_p := old_p || pos[j:e];
            IF page_pins THEN
                FOR c IN 0 .. len - 1 LOOP
                    IF pos[j + c] < 0 OR hs[j + c] <> p_hashes[i + c] THEN
                        pin[j + c] := 0;
                    END IF;
                END LOOP;
            END IF;
            hs[j:e] := p_hashes[i:ie];
            ps[j:e] := p_parents[i:ie];
            pos[j:e] := p_positions[i:ie];
            IF any_lineage AND lin IS NULL THEN
                lin := array_fill(NULL::TEXT, ARRAY[cardinality(hs)]);
            END IF;
            IF lin IS NOT NULL THEN
                lin[j:e] := p_lineages[i:ie];
            END IF;
            ri := ri + 1;
            written := written + len;
        END LOOP;
        IF lin IS NOT NULL AND cardinality(array_remove(lin, NULL)) = 0 THEN
            lin := NULL;
        END IF;
        UPDATE bank_page g SET hashes = hs, parents = ps, positions = pos, lineages = lin, pins = pin
        WHERE g.bank_id = p_bank AND g.rank = p_rank AND g.page = pg;
        -- the other ranks at the same slots: a store is agreed when each holds the same block there
        IF p_tp > 1 AND ri > k THEN
            seen := 0;
            FOR o IN SELECT g.hashes, g.parents, g.positions, g.lineages FROM bank_page g
                     WHERE g.bank_id = p_bank AND g.rank <> p_rank AND g.page = pg LOOP
                -- a run the other rank holds exactly as stored is agreed as a whole
                differ := '{}';
                mine := '{}';
                theirs := '{}';
                FOR r IN k .. ri - 1 LOOP
                    i := runs[3 * r - 2];
                    ie := i + runs[3 * r] - 1;
                    j := runs[3 * r - 1] % 256 + 1;
                    e := j + runs[3 * r] - 1;
                    IF (o.hashes[j:e] = p_hashes[i:ie] AND o.positions[j:e] = p_positions[i:ie]
                        AND o.parents[j:e] = p_parents[i:ie]
                        AND CASE WHEN o.lineages IS NULL THEN cardinality(array_remove(p_lineages[i:ie], NULL)) = 0
                                 ELSE o.lineages[j:e] = p_lineages[i:ie] END) IS NOT TRUE THEN
                        differ := differ || r;
                        mine := mine || p_hashes[i:ie];
                        theirs := theirs || o.hashes[j:e];
                    END IF;
                END LOOP;
                IF cardinality(differ) > 0 THEN
                    IF NOT EXISTS (SELECT 1 FROM unnest(mine, theirs) AS u(a, b) WHERE u.a = u.b) THEN
                        -- no store of those runs meets its hash there: none agreed, none contradicted
                        FOREACH r IN ARRAY differ LOOP
                            agreed[runs[3 * r - 2]:runs[3 * r - 2] + runs[3 * r] - 1] := falses[1:runs[3 * r]];
                        END LOOP;
                    ELSE
                        FOREACH r IN ARRAY differ LOOP
                            i := runs[3 * r - 2];
                            j := runs[3 * r - 1] % 256 + 1;
                            FOR c IN 0 .. runs[3 * r] - 1 LOOP
                                IF o.positions[j + c] <> p_positions[i + c] OR o.hashes[j + c] <> p_hashes[i + c]
                                   OR o.parents[j + c] IS DISTINCT FROM p_parents[i + c]
                                   OR o.lineages[j + c] IS DISTINCT FROM p_lineages[i + c] THEN
                                    agreed[i + c] := FALSE;
                                    -- the same hash at this slot with another position, parent or lineage
                                    IF o.hashes[j + c] = p_hashes[i + c] AND o.positions[j + c] >= 0 THEN
                                        v_disagrees := TRUE;
                                    END IF;
                                END IF;
                            END LOOP;
                        END LOOP;
                    END IF;
                END IF;
                seen := seen + 1;
            END LOOP;
            -- a rank without this page holds nothing at its slots
            IF seen < p_tp - 1 THEN
                FOR r IN k .. ri - 1 LOOP
                    agreed[runs[3 * r - 2]:runs[3 * r - 2] + runs[3 * r] - 1] := falses[1:runs[3 * r]];
                END LOOP;
            END IF;
        END IF;
    END LOOP;
    -- the runs are the caller's: they must have named every store (the exception undoes the writes)
    IF written <> n OR ri <= nruns THEN
        RAISE EXCEPTION 'the runs name % stores of % (% of % runs on the pages)', written, n, ri - 1, nruns;
    END IF;
    -- the feed: stores every rank agrees on; removes of what left the rank and is not agreed again
    IF n > 0 AND TRUE = ALL(agreed) THEN
        s_hashes := p_hashes; s_parents := p_parents; s_positions := p_positions; s_slots := p_slots;
        s_lineages := p_lineages;
    ELSIF TRUE = ANY(agreed) THEN
        SELECT coalesce(array_agg(t.seq_hash), '{}'), coalesce(array_agg(t.parent_hash), '{}'),
               coalesce(array_agg(t.position), '{}'), coalesce(array_agg(t.slot), '{}'),
               coalesce(array_agg(t.mm_lineage), '{}')
        INTO s_hashes, s_parents, s_positions, s_slots, s_lineages
        FROM unnest(p_hashes, p_parents, p_positions, p_slots, p_lineages, agreed)
             AS t(seq_hash, parent_hash, position, slot, mm_lineage, ok)
        WHERE t.ok;
    END IF;
    SELECT coalesce(array_agg(x.seq_hash), '{}') INTO r_hashes
    FROM (SELECT u.h FROM unnest(old_h, old_p) AS u(h, p) WHERE u.p >= 0 EXCEPT SELECT unnest(s_hashes)) AS x(seq_hash);
    v_blocks := kvreuse_feed_blocks(cardinality(s_hashes) + cardinality(r_hashes),
                                    CASE WHEN cardinality(s_hashes) > 0 THEN s_hashes END,
                                    CASE WHEN cardinality(s_hashes) > 0 THEN s_parents END,
                                    CASE WHEN cardinality(s_hashes) > 0 THEN s_positions END,
                                    CASE WHEN cardinality(s_hashes) > 0 THEN s_slots END,
                                    CASE WHEN cardinality(s_hashes) > 0 THEN s_lineages END,
                                    CASE WHEN cardinality(r_hashes) > 0 THEN r_hashes END);
    IF v_blocks IS NOT NULL THEN
        UPDATE retained_bank SET feed_seq = feed_seq + 1 WHERE bank_id = p_bank RETURNING feed_seq INTO v_seq;
        INSERT INTO inventory_change (bank_id, seq, blocks) VALUES (p_bank, v_seq, v_blocks);
        PERFORM pg_notify(p_channel, p_payload || v_seq::TEXT || p_suffix);
    END IF;
    RETURN QUERY SELECT NULL::BIGINT, v_disagrees, v_seq, CASE WHEN v_seq IS NULL THEN NULL ELSE encode(v_blocks, 'base64') END;
END;
$$;

-- V98's call, with the runs passed through
CREATE FUNCTION kvreuse_ingest_batch(
    p_bank UUID, p_rank INTEGER, p_subject TEXT, p_agent_host TEXT, p_first BIGINT, p_last BIGINT,
    p_hashes BIGINT[], p_parents BIGINT[], p_positions INTEGER[], p_slots INTEGER[], p_lineages TEXT[],
    p_removed BIGINT[], p_clears BIGINT, p_source_sequence BIGINT, p_max_slot INTEGER,
    p_version BIGINT, p_own_hashes BIGINT[], p_own_slots INTEGER[], p_misplaced BOOLEAN,
    p_channel TEXT, p_lock_wait_ms TEXT, p_bound_ms TEXT, p_origin TEXT, p_runs INTEGER[] DEFAULT NULL)
RETURNS TABLE (applied_seq BIGINT, applied_blocks TEXT, new_version BIGINT) LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    bank RECORD;
    parts RECORD;
    part RECORD;
    w RECORD;
    v_version BIGINT;
    setting TEXT;
BEGIN
    -- settings as plain expressions (a PERFORM is a query, with its executor)
    setting := set_config('lock_timeout', p_lock_wait_ms, TRUE);
    SELECT b.capacity_blocks, b.state, b.unpublished_reason, b.rank_disagreement, o.owner_subject, o.host_id,
           o.state AS owner_state
    INTO bank
    FROM retained_bank b JOIN engine_incarnation o ON o.incarnation_id = b.incarnation_id
    WHERE b.bank_id = p_bank FOR NO KEY UPDATE OF b;
    IF NOT FOUND OR bank.state = 'DROPPED' THEN
        setting := set_config('lock_timeout', p_bound_ms, TRUE);
        RAISE EXCEPTION 'no fast path: bank' USING ERRCODE = 'KVR01';
    END IF;
    setting := set_config('lock_timeout', p_bound_ms, TRUE);
    IF NOT coalesce((bank.owner_subject = p_subject AND p_agent_host IS NULL) OR bank.host_id = p_agent_host, FALSE)
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
                                        bank.rank_disagreement, bank.owner_state) THEN
        RAISE EXCEPTION 'no fast path: stream or publication' USING ERRCODE = 'KVR01';
    END IF;
    SELECT * INTO w FROM kvreuse_bank_write(p_bank, p_rank, parts.tp::INTEGER, p_hashes, p_parents, p_positions,
                                            p_slots, p_lineages, p_removed, p_version, p_own_hashes,
                                            p_own_slots, p_misplaced, p_channel, p_bank::TEXT || ':',
                                            ':' || p_origin, p_runs);
    IF w.pinned IS NOT NULL THEN
        RAISE EXCEPTION 'no fast path: pinned block' USING ERRCODE = 'KVR01';
    END IF;
    IF w.disagrees AND NOT bank.rank_disagreement THEN
        RAISE EXCEPTION 'no fast path: new disagreement' USING ERRCODE = 'KVR01';
    END IF;
    UPDATE bank_part SET last_event_id = p_last, native_clears = native_clears + p_clears, events_started = TRUE,
                         source_sequence = coalesce(p_source_sequence, source_sequence),
                         page_version = nextval('bank_page_version')
    WHERE bank_id = p_bank AND rank = p_rank
    RETURNING bank_part.page_version INTO v_version;
    RETURN QUERY SELECT w.applied_seq, w.applied_blocks, v_version;
END;
$$;

-- Generic plans for the statements of both (planned once per connection): with array arguments the
-- plan cache otherwise keeps planning a custom plan at every call, a third of a small batch's cost
-- in PostgreSQL (docs/ingestion-throughput.md, "Slot runs").
ALTER FUNCTION kvreuse_bank_write SET plan_cache_mode = force_generic_plan;
ALTER FUNCTION kvreuse_ingest_batch SET plan_cache_mode = force_generic_plan;
