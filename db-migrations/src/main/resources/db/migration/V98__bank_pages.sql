-- A retained bank's blocks as per-rank slot pages (docs/ingestion-throughput.md, "Slot pages"):
-- one bank_page row holds 256 consecutive slots of one rank as arrays, so a batch that overwrites
-- a slot updates an array element of a row that stays instead of deleting a row and inserting
-- another (each with a heap tuple and two B-tree entries: most of what ingestion cost). No row per
-- block remains, so nothing in PostgreSQL looks a block up by its hash: the control plane replica
-- that writes a bank keeps each rank's hash -> slot map (bank.RankMaps), loaded from the pages and
-- versioned by the rank's page_version, which every write of the rank's pages sets to a new value
-- of the sequence bank_page_version (never the same twice, so a write that rolled back leaves no
-- version that a later write could take again with other contents); a write names the version of
-- its rank's map and is refused (SQLSTATE KVR02) when it has moved since, and
-- names the slots the map gives for the hashes it stores again or removes, which the write checks
-- against the pages. bank_block stays, as a view with its old columns, for every reader. Only the
-- functions below and the lease writer's pin fragment (BlockPins) write the pages.
--
-- An empty slot has position -1 (hash 0, no parent, no lineage, no pins); a root's parent is a
-- NULL element; lineages is NULL while no slot of the page has one. A page is created when its
-- rank first writes one of its slots (kvreuse_bank_ensure_pages); a rank without a page at a slot
-- holds nothing there. A dropped bank's pages are deleted. This migration needs every replica of
-- the previous release stopped: their writes go to the table it replaces.

CREATE TABLE bank_page (
    bank_id   UUID      NOT NULL,
    rank      INTEGER   NOT NULL,
    page      INTEGER   NOT NULL CHECK (page >= 0),
    hashes    BIGINT[]  NOT NULL,
    parents   BIGINT[]  NOT NULL,
    positions INTEGER[] NOT NULL,
    lineages  TEXT[],
    pins      INTEGER[] NOT NULL,
    PRIMARY KEY (bank_id, rank, page)
);
-- the fixed-width arrays (about 6 KB a page) stay inline: no TOAST lookups, no compression attempts
-- of random hashes on every write
ALTER TABLE bank_page ALTER hashes SET STORAGE PLAIN, ALTER parents SET STORAGE PLAIN,
    ALTER positions SET STORAGE PLAIN, ALTER pins SET STORAGE PLAIN;
ALTER TABLE bank_page SET (autovacuum_vacuum_scale_factor = 0.05);

ALTER TABLE bank_part ADD COLUMN page_version BIGINT NOT NULL DEFAULT 0;
CREATE SEQUENCE bank_page_version;

-- Pages exist for the slot ranges a rank has written: a bank may be declared with up to 10,000,000
-- slots a rank and use a fraction of them. The missing ones of p_pages are created empty (the last
-- page of a bank is shorter when its capacity is not a multiple of 256).
CREATE FUNCTION kvreuse_bank_ensure_pages(p_bank UUID, p_rank INTEGER, p_pages INTEGER[])
RETURNS VOID LANGUAGE sql VOLATILE AS $$
    INSERT INTO bank_page (bank_id, rank, page, hashes, parents, positions, lineages, pins)
    SELECT p_bank, p_rank, x.page, array_fill(0::BIGINT, ARRAY[z.n]), array_fill(NULL::BIGINT, ARRAY[z.n]),
           array_fill(-1, ARRAY[z.n]), NULL, array_fill(0, ARRAY[z.n])
    FROM unnest(p_pages) AS x(page)
    JOIN retained_bank b ON b.bank_id = p_bank
    CROSS JOIN LATERAL (SELECT least(256, b.capacity_blocks - x.page * 256) AS n) AS z
    WHERE z.n > 0
      AND NOT EXISTS (SELECT 1 FROM bank_page g WHERE g.bank_id = p_bank AND g.rank = p_rank AND g.page = x.page)
    ON CONFLICT DO NOTHING;
$$;

-- the existing banks' blocks move into pages (a dropped bank has none)
INSERT INTO bank_page (bank_id, rank, page, hashes, parents, positions, lineages, pins)
SELECT u.bank_id, u.rank, u.page,
       array_agg(coalesce(k.seq_hash, 0) ORDER BY s.slot),
       array_agg(k.parent_hash ORDER BY s.slot),
       array_agg(coalesce(k.position, -1) ORDER BY s.slot),
       CASE WHEN bool_or(k.mm_lineage IS NOT NULL) THEN array_agg(k.mm_lineage ORDER BY s.slot) END,
       array_agg(coalesce(k.pin_count, 0) ORDER BY s.slot)
FROM (SELECT DISTINCT bank_id, rank, slot / 256 AS page FROM bank_block) AS u
JOIN retained_bank b ON b.bank_id = u.bank_id
CROSS JOIN LATERAL generate_series(u.page * 256, least(u.page * 256 + 255, b.capacity_blocks - 1)) AS s(slot)
LEFT JOIN bank_block k ON k.bank_id = u.bank_id AND k.rank = u.rank AND k.slot = s.slot
GROUP BY u.bank_id, u.rank, u.page;

DROP TABLE bank_block;

CREATE VIEW bank_block AS
SELECT p.bank_id, p.rank, p.hashes[e.i] AS seq_hash, p.parents[e.i] AS parent_hash, p.positions[e.i] AS position,
       p.page * 256 + e.i - 1 AS slot, p.lineages[e.i] AS mm_lineage, p.pins[e.i] AS pin_count
FROM bank_page p
CROSS JOIN LATERAL generate_subscripts(p.positions, 1) AS e(i)
WHERE p.positions[e.i] >= 0;

-- Writes a batch's net effect on one rank, as BankWrites.EVENTS did on rows. The caller holds the
-- bank's row lock and names, from its maps: the version of this rank's map (p_version; KVR02 when it
-- is not the rank's page_version), the slots this rank holds the batch's stored and removed hashes
-- at (p_own_hashes, p_own_slots; KVR02 when a page disagrees) and whether another rank holds a
-- stored hash at another slot as far as its maps know (p_misplaced, a disagreement). The slots the batch stores
-- at and those old slots are emptied (refusing, and writing nothing, when that would move or drop a
-- pinned block: the answer's pinned), then the stores are written, with its pins for a block stored
-- again at its own slot. A store is agreed when every other rank holds the same block (hash,
-- position, parent, lineage) at its slot; the same hash there with another position, parent or
-- lineage is a disagreement. The STORE and REMOVE ops go into the bank's change feed with a NOTIFY
-- of p_payload || seq || p_suffix on p_channel. The caller gives the rank a new page_version
-- (nextval('bank_page_version')) in the same transaction. Pages are locked in ascending order, as the pin statements lock them.
CREATE FUNCTION kvreuse_bank_write(
    p_bank UUID, p_rank INTEGER, p_tp INTEGER,
    p_hashes BIGINT[], p_parents BIGINT[], p_positions INTEGER[], p_slots INTEGER[], p_lineages TEXT[],
    p_removed BIGINT[], p_version BIGINT, p_own_hashes BIGINT[], p_own_slots INTEGER[],
    p_misplaced BOOLEAN, p_channel TEXT, p_payload TEXT, p_suffix TEXT)
RETURNS TABLE (pinned BIGINT, disagrees BOOLEAN, applied_seq BIGINT, applied_blocks TEXT)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    n INTEGER := coalesce(cardinality(p_hashes), 0);
    own_slots INTEGER[];
    clear_slots INTEGER[];
    empty_slots INTEGER[];
    pages INTEGER[];
    g_hashes BIGINT[];
    g_slots INTEGER[];
    g_pins INTEGER[];
    v_pinned BIGINT;
    order_idx INTEGER[];
    agreed BOOLEAN[];
    v_disagrees BOOLEAN := FALSE;
    seen INTEGER;
    pg INTEGER;
    k INTEGER;
    c INTEGER;
    i INTEGER;
    j INTEGER;
    ci INTEGER := 1;
    si INTEGER := 1;
    hs BIGINT[];
    ps BIGINT[];
    pos INTEGER[];
    lin TEXT[];
    pin INTEGER[];
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
    END IF;
    IF NOT EXISTS (SELECT 1 FROM bank_part p WHERE p.bank_id = p_bank AND p.rank = p_rank AND p.page_version = p_version) THEN
        RAISE EXCEPTION 'stale rank map' USING ERRCODE = 'KVR02';
    END IF;
    own_slots := coalesce(p_own_slots, '{}');
    v_disagrees := coalesce(p_misplaced, FALSE);
    -- the slots to empty: those the batch stores at (overwritten) and this rank's old slots of the
    -- hashes it stores or removes; empty_slots are the latter that no store overwrites
    SELECT coalesce(array_agg(DISTINCT x.slot ORDER BY x.slot), '{}') INTO clear_slots
    FROM (SELECT unnest(p_slots) UNION ALL SELECT unnest(own_slots)) AS x(slot);
    SELECT coalesce(array_agg(x.slot ORDER BY x.slot), '{}') INTO empty_slots
    FROM (SELECT unnest(own_slots) EXCEPT SELECT unnest(p_slots)) AS x(slot);
    SELECT coalesce(array_agg(DISTINCT x.slot / 256 ORDER BY x.slot / 256), '{}') INTO pages
    FROM unnest(clear_slots) AS x(slot);
    PERFORM kvreuse_bank_ensure_pages(p_bank, p_rank, pages);
    PERFORM 1 FROM bank_page g WHERE g.bank_id = p_bank AND g.rank = p_rank AND g.page = ANY(pages)
    ORDER BY g.page FOR NO KEY UPDATE;
    -- the map's slots are where the pages hold those hashes (the versions say so; this is the check)
    IF EXISTS (SELECT 1 FROM unnest(p_own_hashes, p_own_slots) AS m(seq_hash, slot)
               LEFT JOIN bank_page g ON g.bank_id = p_bank AND g.rank = p_rank AND g.page = m.slot / 256
               WHERE g.page IS NULL OR g.positions[m.slot % 256 + 1] < 0 OR g.hashes[m.slot % 256 + 1] <> m.seq_hash) THEN
        RAISE EXCEPTION 'rank map disagrees with the pages' USING ERRCODE = 'KVR02';
    END IF;

    -- what the emptied slots held
    SELECT coalesce(array_agg(g.hashes[x.slot % 256 + 1]), '{}'), coalesce(array_agg(x.slot), '{}'),
           coalesce(array_agg(g.pins[x.slot % 256 + 1]), '{}')
    INTO g_hashes, g_slots, g_pins
    FROM bank_page g CROSS JOIN LATERAL unnest(clear_slots) AS x(slot)
    WHERE g.bank_id = p_bank AND g.rank = p_rank AND g.page = ANY(pages) AND x.slot / 256 = g.page
      AND g.positions[x.slot % 256 + 1] >= 0;
    -- a pinned block may only stay where it is: stored again at its own slot
    SELECT min(g.seq_hash) INTO v_pinned
    FROM unnest(g_hashes, g_slots, g_pins) AS g(seq_hash, slot, pin_count)
    WHERE g.pin_count > 0
      AND NOT EXISTS (SELECT 1 FROM unnest(p_hashes, p_slots) AS t(seq_hash, slot)
                      WHERE t.seq_hash = g.seq_hash AND t.slot = g.slot);
    IF v_pinned IS NOT NULL THEN
        RETURN QUERY SELECT v_pinned, FALSE, NULL::BIGINT, NULL::TEXT;
        RETURN;
    END IF;

    -- the pages, one at a time in ascending order: empty the slots, then write the stores (pins
    -- stay with a block stored again at its own slot, the only move of a pinned block allowed)
    SELECT coalesce(array_agg(t.i ORDER BY t.slot), '{}') INTO order_idx
    FROM unnest(p_slots) WITH ORDINALITY AS t(slot, i);
    agreed := array_fill(TRUE, ARRAY[n]);
    FOREACH pg IN ARRAY pages LOOP
        SELECT g.hashes, g.parents, g.positions, g.lineages, g.pins INTO hs, ps, pos, lin, pin
        FROM bank_page g WHERE g.bank_id = p_bank AND g.rank = p_rank AND g.page = pg;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'bank % rank % has no page %', p_bank, p_rank, pg;
        END IF;
        WHILE ci <= cardinality(empty_slots) AND empty_slots[ci] / 256 = pg LOOP
            j := empty_slots[ci] % 256 + 1;
            hs[j] := 0; ps[j] := NULL; pos[j] := -1; pin[j] := 0;
            IF lin IS NOT NULL THEN
                lin[j] := NULL;
            END IF;
            ci := ci + 1;
        END LOOP;
        k := si;
        WHILE si <= n AND p_slots[order_idx[si]] / 256 = pg LOOP
            i := order_idx[si];
            j := p_slots[i] % 256 + 1;
            IF pos[j] < 0 OR hs[j] <> p_hashes[i] THEN
                pin[j] := 0;
            END IF;
            hs[j] := p_hashes[i]; ps[j] := p_parents[i]; pos[j] := p_positions[i];
            IF p_lineages[i] IS NOT NULL AND lin IS NULL THEN
                lin := array_fill(NULL::TEXT, ARRAY[cardinality(hs)]);
            END IF;
            IF lin IS NOT NULL THEN
                lin[j] := p_lineages[i];
            END IF;
            si := si + 1;
        END LOOP;
        IF lin IS NOT NULL AND NOT EXISTS (SELECT 1 FROM unnest(lin) AS l(v) WHERE l.v IS NOT NULL) THEN
            lin := NULL;
        END IF;
        UPDATE bank_page g SET hashes = hs, parents = ps, positions = pos, lineages = lin, pins = pin
        WHERE g.bank_id = p_bank AND g.rank = p_rank AND g.page = pg;
        -- the other ranks at the same slots: a store is agreed when each holds the same block there
        IF p_tp > 1 AND si > k THEN
            seen := 0;
            FOR o IN SELECT g.hashes, g.parents, g.positions, g.lineages FROM bank_page g
                     WHERE g.bank_id = p_bank AND g.rank <> p_rank AND g.page = pg LOOP
                FOR c IN k .. si - 1 LOOP
                    i := order_idx[c];
                    j := p_slots[i] % 256 + 1;
                    IF o.positions[j] <> p_positions[i] OR o.hashes[j] <> p_hashes[i]
                       OR o.parents[j] IS DISTINCT FROM p_parents[i]
                       OR o.lineages[j] IS DISTINCT FROM p_lineages[i] THEN
                        agreed[i] := FALSE;
                        -- the same hash at this slot with another position, parent or lineage
                        IF o.hashes[j] = p_hashes[i] AND o.positions[j] >= 0 THEN
                            v_disagrees := TRUE;
                        END IF;
                    END IF;
                END LOOP;
                seen := seen + 1;
            END LOOP;
            -- a rank without this page holds nothing at its slots
            IF seen < p_tp - 1 THEN
                FOR c IN k .. si - 1 LOOP
                    agreed[order_idx[c]] := FALSE;
                END LOOP;
            END IF;
        END IF;
    END LOOP;
    -- the feed: stores every rank agrees on; removes of what left the rank and is not agreed again
    SELECT coalesce(array_agg(t.seq_hash), '{}'), coalesce(array_agg(t.parent_hash), '{}'),
           coalesce(array_agg(t.position), '{}'), coalesce(array_agg(t.slot), '{}'),
           coalesce(array_agg(t.mm_lineage), '{}')
    INTO s_hashes, s_parents, s_positions, s_slots, s_lineages
    FROM unnest(p_hashes, p_parents, p_positions, p_slots, p_lineages, agreed)
         AS t(seq_hash, parent_hash, position, slot, mm_lineage, ok)
    WHERE t.ok;
    SELECT coalesce(array_agg(x.seq_hash), '{}') INTO r_hashes
    FROM (SELECT unnest(g_hashes) EXCEPT SELECT unnest(s_hashes)) AS x(seq_hash);
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

-- V95's call on the pages, with the caller's rank maps: the same checks in the same order (the
-- parents' positions now checked by the caller from its map before the call), the write by
-- kvreuse_bank_write; a pinned block or a new disagreement is left to the general transaction
-- (KVR01), stale maps are answered KVR02, in both cases having written nothing (the call is one
-- statement). The answer carries the rank's new page_version. V95's functions go: the previous release's replicas cannot share the pages.
DROP FUNCTION kvreuse_ingest_batch(UUID, INTEGER, TEXT, TEXT, BIGINT, BIGINT, BIGINT[], BIGINT[], INTEGER[], INTEGER[],
                                   TEXT[], BIGINT[], BIGINT, BIGINT, INTEGER, BIGINT[], INTEGER[], TEXT, TEXT, TEXT);
DROP FUNCTION kvreuse_ingest_batch(UUID, INTEGER, TEXT, TEXT, BIGINT, BIGINT, BIGINT[], BIGINT[], INTEGER[], INTEGER[],
                                   TEXT[], BIGINT[], BIGINT, BIGINT, INTEGER, BIGINT[], INTEGER[], TEXT, TEXT, TEXT, TEXT);

CREATE FUNCTION kvreuse_ingest_batch(
    p_bank UUID, p_rank INTEGER, p_subject TEXT, p_agent_host TEXT, p_first BIGINT, p_last BIGINT,
    p_hashes BIGINT[], p_parents BIGINT[], p_positions INTEGER[], p_slots INTEGER[], p_lineages TEXT[],
    p_removed BIGINT[], p_clears BIGINT, p_source_sequence BIGINT, p_max_slot INTEGER,
    p_version BIGINT, p_own_hashes BIGINT[], p_own_slots INTEGER[], p_misplaced BOOLEAN,
    p_channel TEXT, p_lock_wait_ms TEXT, p_bound_ms TEXT, p_origin TEXT)
RETURNS TABLE (applied_seq BIGINT, applied_blocks TEXT, new_version BIGINT) LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    bank RECORD;
    own RECORD;
    parts RECORD;
    part RECORD;
    w RECORD;
    v_version BIGINT;
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
    SELECT * INTO w FROM kvreuse_bank_write(p_bank, p_rank, parts.tp::INTEGER, p_hashes, p_parents, p_positions,
                                            p_slots, p_lineages, p_removed, p_version, p_own_hashes,
                                            p_own_slots, p_misplaced, p_channel, p_bank::TEXT || ':',
                                            ':' || p_origin);
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

-- A snapshot replaces one rank's blocks (and moves its page_version): refused (the answer names the block, nothing written) when
-- a pinned block is not in the snapshot at its slot; a pinned block that is keeps its pins.
CREATE FUNCTION kvreuse_bank_replace_rank(
    p_bank UUID, p_rank INTEGER,
    p_hashes BIGINT[], p_parents BIGINT[], p_positions INTEGER[], p_slots INTEGER[], p_lineages TEXT[])
RETURNS BIGINT LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    v_pinned BIGINT;
BEGIN
    PERFORM kvreuse_bank_ensure_pages(p_bank, p_rank,
                                      ARRAY(SELECT DISTINCT t.slot / 256 FROM unnest(p_slots) AS t(slot)));
    PERFORM 1 FROM bank_page g WHERE g.bank_id = p_bank AND g.rank = p_rank ORDER BY g.page FOR NO KEY UPDATE;
    SELECT min(g.hashes[e.i]) INTO v_pinned
    FROM bank_page g CROSS JOIN LATERAL generate_subscripts(g.pins, 1) AS e(i)
    LEFT JOIN unnest(p_hashes, p_slots) AS t(seq_hash, slot) ON t.slot = g.page * 256 + e.i - 1
    WHERE g.bank_id = p_bank AND g.rank = p_rank AND g.pins[e.i] > 0 AND g.positions[e.i] >= 0
      AND t.seq_hash IS DISTINCT FROM g.hashes[e.i];
    IF v_pinned IS NOT NULL THEN
        RETURN v_pinned;
    END IF;
    UPDATE bank_page g SET hashes = x.hashes, parents = x.parents, positions = x.positions,
                           lineages = x.lineages, pins = x.pins
    FROM (SELECT o.page,
                 array_agg(coalesce(t.seq_hash, 0) ORDER BY e.i) AS hashes,
                 array_agg(t.parent_hash ORDER BY e.i) AS parents,
                 array_agg(coalesce(t.position, -1) ORDER BY e.i) AS positions,
                 CASE WHEN bool_or(t.mm_lineage IS NOT NULL) THEN array_agg(t.mm_lineage ORDER BY e.i) END AS lineages,
                 array_agg(CASE WHEN o.positions[e.i] >= 0 AND t.seq_hash = o.hashes[e.i] THEN o.pins[e.i] ELSE 0 END
                           ORDER BY e.i) AS pins
          FROM bank_page o CROSS JOIN LATERAL generate_subscripts(o.positions, 1) AS e(i)
          LEFT JOIN unnest(p_hashes, p_parents, p_positions, p_slots, p_lineages)
                    AS t(seq_hash, parent_hash, position, slot, mm_lineage) ON t.slot = o.page * 256 + e.i - 1
          WHERE o.bank_id = p_bank AND o.rank = p_rank
          GROUP BY o.page) AS x
    WHERE g.bank_id = p_bank AND g.rank = p_rank AND g.page = x.page;
    UPDATE bank_part SET page_version = nextval('bank_page_version') WHERE bank_id = p_bank AND rank = p_rank;
    RETURN NULL;
END;
$$;

-- every block of a bank gone, pins included (a reset; pins are released later without a block);
-- every rank's page_version moves
CREATE FUNCTION kvreuse_bank_clear(p_bank UUID) RETURNS VOID LANGUAGE sql VOLATILE AS $$
    UPDATE bank_page g SET hashes = array_fill(0::BIGINT, ARRAY[cardinality(g.hashes)]),
                           parents = array_fill(NULL::BIGINT, ARRAY[cardinality(g.hashes)]),
                           positions = array_fill(-1, ARRAY[cardinality(g.hashes)]),
                           lineages = NULL, pins = array_fill(0, ARRAY[cardinality(g.hashes)])
    WHERE g.bank_id = p_bank AND NOT (g.positions <@ ARRAY[-1]);
    UPDATE bank_part SET page_version = nextval('bank_page_version') WHERE bank_id = p_bank;
$$;

-- a page's pin counts with p_n added at the elements p_idx (each listed once) that hold p_hash,
-- never below zero; an element holding another block (or none) is left as it is
CREATE FUNCTION kvreuse_pins_adjust(
    p_pins INTEGER[], p_hashes BIGINT[], p_positions INTEGER[], p_idx INTEGER[], p_hash BIGINT[], p_n BIGINT[])
RETURNS INTEGER[] LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    k INTEGER;
    j INTEGER;
BEGIN
    FOR k IN 1 .. coalesce(cardinality(p_idx), 0) LOOP
        j := p_idx[k];
        IF p_positions[j] >= 0 AND p_hashes[j] = p_hash[k] THEN
            p_pins[j] := greatest(p_pins[j] + p_n[k], 0);
        END IF;
    END LOOP;
    RETURN p_pins;
END;
$$;

-- A bank's pages and every rank's page_version, read in one snapshot for the replica's rank maps,
-- waiting at most p_lock_wait_ms for the pages' lock (the call is the statement that locks them, so
-- the bound applies to it; a plain statement would take its locks before any setting of its own).
CREATE FUNCTION kvreuse_bank_pages(p_bank UUID, p_lock_wait_ms TEXT)
RETURNS TABLE (rank INTEGER, page_version BIGINT, page INTEGER, hashes BIGINT[], positions INTEGER[])
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    PERFORM set_config('lock_timeout', p_lock_wait_ms, TRUE);
    RETURN QUERY
    SELECT p.rank, p.page_version, g.page, g.hashes, g.positions
    FROM bank_part p LEFT JOIN bank_page g ON g.bank_id = p.bank_id AND g.rank = p.rank
    WHERE p.bank_id = p_bank ORDER BY p.rank, g.page;
END;
$$;
