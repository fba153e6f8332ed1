-- A design experiment, not kvreuse's write path: a retained bank stored as per-rank slot pages
-- (docs/ingestion-throughput.md, "Fewer rows per block: a page prototype"). One row holds :P slots
-- of one rank (hashes, parents, positions, pins as arrays kept inline: :P = 256 is about 6 KB);
-- a batch overwrites array elements instead of deleting and inserting a row per block, and rank
-- agreement compares the other ranks' pages at the same slots. Left out, and needed by a real
-- implementation: a hash -> slot lookup (pins by hash, a hash stored again at a new slot, parents
-- named without a position), multimodal lineages, the checks kvreuse_ingest_batch makes before it
-- writes (caller, stream position, publication). Filled from the benchmark's bank_block.
DROP TABLE IF EXISTS proto_page;
DROP TABLE IF EXISTS proto_hash;
CREATE TABLE proto_page (
    bank_id UUID NOT NULL, rank INTEGER NOT NULL, page INTEGER NOT NULL,
    hashes BIGINT[] NOT NULL, parents BIGINT[] NOT NULL, positions INTEGER[] NOT NULL, pins INTEGER[] NOT NULL,
    PRIMARY KEY (bank_id, rank, page));
ALTER TABLE proto_page ALTER hashes SET STORAGE PLAIN, ALTER parents SET STORAGE PLAIN,
    ALTER positions SET STORAGE PLAIN, ALTER pins SET STORAGE PLAIN;
INSERT INTO proto_page
SELECT b.bank_id, r.rank, pg.page,
       array_agg(coalesce(k.seq_hash, 0) ORDER BY s.slot),
       array_agg(coalesce(k.parent_hash, 0) ORDER BY s.slot),
       array_agg(coalesce(k.position, -1) ORDER BY s.slot),
       array_fill(0, ARRAY[:P])
FROM retained_bank b
CROSS JOIN generate_series(0, 1) r(rank)
CROSS JOIN LATERAL generate_series(0, b.capacity_blocks / :P - 1) pg(page)
CROSS JOIN LATERAL generate_series(pg.page * :P, pg.page * :P + :P - 1) s(slot)
LEFT JOIN bank_block k ON k.bank_id = b.bank_id AND k.rank = r.rank AND k.slot = s.slot
GROUP BY b.bank_id, r.rank, pg.page;
VACUUM ANALYZE proto_page;

-- For the variant with a hash -> slot map kept beside the pages as a row per block (what pins by
-- hash, a hash stored again at a new slot and parents without positions would look up): how much of
-- the row layout's cost that one index brings back (proto_ingest(..., p_hash_map => TRUE)).
CREATE TABLE proto_hash (
    bank_id UUID NOT NULL, rank INTEGER NOT NULL, seq_hash BIGINT NOT NULL, slot INTEGER NOT NULL,
    PRIMARY KEY (bank_id, rank, seq_hash));
INSERT INTO proto_hash SELECT bank_id, rank, seq_hash, min(slot) FROM bank_block GROUP BY bank_id, rank, seq_hash;
VACUUM ANALYZE proto_hash;

-- one rank's batch (slots ascending): overwrite its pages, then compare with the other ranks' pages;
-- the feed row is built by the product's kvreuse_feed_blocks, as kvreuse_ingest_batch builds it
-- With p_removed (the hashes an eviction batch removes by hash, as vLLM's BlockRemoved names them),
-- the rank's hash -> slot lookups are a scan of the rank's pages instead of a map: one hash join of
-- every element of the rank's pages with the batch's stored and removed hashes, finding the slots of
-- the removed hashes and any stored hash the rank already holds at another slot (both cleared).
CREATE OR REPLACE FUNCTION proto_ingest(p_bank UUID, p_rank INT, p_tp INT, p_hashes BIGINT[], p_parents BIGINT[],
                                        p_positions INT[], p_slots INT[], p_per INT, p_hash_map BOOLEAN DEFAULT FALSE,
                                        p_removed BIGINT[] DEFAULT NULL)
RETURNS INTEGER LANGUAGE plpgsql AS $$
DECLARE
    clear_slots INT[];
    c INT;
    n INT := cardinality(p_hashes);
    pg INT; lo INT; hi INT; k INT; j INT;
    hs BIGINT[]; ps BIGINT[]; pos INT[]; pins INT[];
    o RECORD;
    removed BIGINT[] := '{}';
    agreed BOOLEAN[];
    s_h BIGINT[] := '{}'; s_p BIGINT[] := '{}'; s_pos INT[] := '{}'; s_slot INT[] := '{}';
    v_blocks BYTEA;
BEGIN
    PERFORM 1 FROM retained_bank WHERE bank_id = p_bank FOR NO KEY UPDATE;
    IF p_removed IS NOT NULL THEN
        -- a hash join both ways (generic plans otherwise compare every element with every key)
        SET LOCAL enable_nestloop = off;
        SELECT coalesce(array_agg(x.slot), '{}') INTO clear_slots
        FROM (SELECT g.page * p_per + e.i - 1 AS slot
              FROM proto_page g CROSS JOIN LATERAL unnest(g.hashes) WITH ORDINALITY AS e(h, i)
              JOIN (SELECT unnest(p_hashes) UNION ALL SELECT unnest(p_removed)) AS t(h) ON t.h = e.h
              WHERE g.bank_id = p_bank AND g.rank = p_rank) x
        LEFT JOIN unnest(p_slots) AS b(slot) ON b.slot = x.slot
        WHERE b.slot IS NULL;
        SET LOCAL enable_nestloop = on;
        FOREACH c IN ARRAY clear_slots LOOP
            UPDATE proto_page g SET hashes[c - g.page * p_per + 1] = 0
            WHERE g.bank_id = p_bank AND g.rank = p_rank AND g.page = c / p_per;
        END LOOP;
    END IF;
    agreed := array_fill(TRUE, ARRAY[n]);
    lo := 1;
    WHILE lo <= n LOOP
        pg := p_slots[lo] / p_per;
        hi := lo;
        WHILE hi < n AND p_slots[hi + 1] / p_per = pg LOOP hi := hi + 1; END LOOP;
        SELECT g.hashes, g.parents, g.positions, g.pins INTO hs, ps, pos, pins
        FROM proto_page g WHERE g.bank_id = p_bank AND g.rank = p_rank AND g.page = pg FOR UPDATE;
        FOR k IN lo .. hi LOOP
            j := p_slots[k] - pg * p_per + 1;
            IF hs[j] <> 0 AND hs[j] <> p_hashes[k] THEN
                IF pins[j] > 0 THEN
                    RAISE EXCEPTION 'pinned block' USING ERRCODE = 'KVR01';
                END IF;
                removed := removed || hs[j];
            END IF;
            hs[j] := p_hashes[k]; ps[j] := coalesce(p_parents[k], 0); pos[j] := p_positions[k];
        END LOOP;
        UPDATE proto_page g SET hashes = hs, parents = ps, positions = pos
        WHERE g.bank_id = p_bank AND g.rank = p_rank AND g.page = pg;
        FOR o IN SELECT g.hashes, g.parents, g.positions FROM proto_page g
                 WHERE g.bank_id = p_bank AND g.rank <> p_rank AND g.page = pg LOOP
            FOR k IN lo .. hi LOOP
                j := p_slots[k] - pg * p_per + 1;
                IF o.hashes[j] <> p_hashes[k] OR o.parents[j] <> coalesce(p_parents[k], 0)
                   OR o.positions[j] <> p_positions[k] THEN
                    agreed[k] := FALSE;
                END IF;
            END LOOP;
        END LOOP;
        lo := hi + 1;
    END LOOP;
    IF p_hash_map THEN
        -- the rank's hash -> slot map kept as a row per block: its old hashes out, the new ones in
        DELETE FROM proto_hash h USING unnest(removed) AS r(seq_hash)
        WHERE h.bank_id = p_bank AND h.rank = p_rank AND h.seq_hash = r.seq_hash;
        INSERT INTO proto_hash (bank_id, rank, seq_hash, slot)
        SELECT p_bank, p_rank, t.h, t.slot FROM unnest(p_hashes, p_slots) AS t(h, slot);
    END IF;
    IF p_tp > 1 THEN
        FOR k IN 1 .. n LOOP
            IF agreed[k] THEN
                s_h := s_h || p_hashes[k]; s_p := s_p || p_parents[k];
                s_pos := s_pos || p_positions[k]; s_slot := s_slot || p_slots[k];
            END IF;
        END LOOP;
    END IF;
    v_blocks := kvreuse_feed_blocks(cardinality(s_h) + cardinality(removed), s_h, s_p, s_pos, s_slot, NULL::TEXT[], removed);
    IF v_blocks IS NOT NULL THEN
        UPDATE retained_bank SET feed_seq = feed_seq + 1 WHERE bank_id = p_bank;
        INSERT INTO inventory_change (bank_id, seq, blocks)
        SELECT p_bank, feed_seq, v_blocks FROM retained_bank WHERE bank_id = p_bank;
    END IF;
    RETURN cardinality(s_h);
END $$;

-- The third variant: a row per (bank, rank, slot) that stays, every slot of a bank present from the
-- start (an empty slot holds hash 0), keyed by the slot alone. A batch updates its slots' rows in
-- place: no key column changes and the table leaves half of each heap page free, so an update is a
-- heap-only tuple (HOT) with no index entry written. Like the pages, it keeps no hash -> slot lookup
-- in PostgreSQL; with p_dup_scan it finds a hash the rank already holds at another slot by reading
-- the rank's every slot row.
DROP TABLE IF EXISTS proto_slot;
CREATE TABLE proto_slot (
    bank_id UUID NOT NULL, rank INTEGER NOT NULL, slot INTEGER NOT NULL,
    seq_hash BIGINT NOT NULL, parent_hash BIGINT NOT NULL, position INTEGER NOT NULL, pin_count INTEGER NOT NULL,
    PRIMARY KEY (bank_id, rank, slot)) WITH (fillfactor = 50);
INSERT INTO proto_slot
SELECT b.bank_id, r.rank, s.slot, coalesce(k.seq_hash, 0), coalesce(k.parent_hash, 0), coalesce(k.position, -1), 0
FROM retained_bank b
CROSS JOIN generate_series(0, 1) r(rank)
CROSS JOIN LATERAL generate_series(0, b.capacity_blocks - 1) s(slot)
LEFT JOIN bank_block k ON k.bank_id = b.bank_id AND k.rank = r.rank AND k.slot = s.slot
ORDER BY 1, 2, 3;
VACUUM ANALYZE proto_slot;

CREATE OR REPLACE FUNCTION proto_ingest_slots(p_bank UUID, p_rank INT, p_tp INT, p_hashes BIGINT[], p_parents BIGINT[],
                                              p_positions INT[], p_slots INT[], p_dup_scan BOOLEAN DEFAULT FALSE)
RETURNS INTEGER LANGUAGE plpgsql AS $$
DECLARE
    removed BIGINT[];
    dups INT[];
    pinned BOOLEAN;
    s_h BIGINT[]; s_p BIGINT[]; s_pos INT[]; s_slot INT[];
    v_blocks BYTEA;
BEGIN
    PERFORM 1 FROM retained_bank WHERE bank_id = p_bank FOR NO KEY UPDATE;
    IF p_dup_scan THEN
        SELECT coalesce(array_agg(o.slot), '{}') INTO dups
        FROM proto_slot o JOIN unnest(p_hashes, p_slots) AS t(h, slot) ON o.seq_hash = t.h AND o.slot <> t.slot
        WHERE o.bank_id = p_bank AND o.rank = p_rank;
    END IF;
    -- each slot's row found by its key: a LATERAL probe per slot, a plan the generic plan keeps
    WITH old AS (
        SELECT o.row, o.old_hash, o.pin_count, t.*
        FROM unnest(p_hashes, p_parents, p_positions, p_slots) AS t(h, p, pos, slot)
        CROSS JOIN LATERAL (SELECT x.ctid AS row, x.seq_hash AS old_hash, x.pin_count FROM proto_slot x
                            WHERE x.bank_id = p_bank AND x.rank = p_rank AND x.slot = t.slot FOR UPDATE) AS o
    ), upd AS (
        UPDATE proto_slot s SET seq_hash = old.h, parent_hash = coalesce(old.p, 0), position = old.pos
        FROM old WHERE s.ctid = old.row
        RETURNING old.old_hash, old.h, old.pin_count
    )
    SELECT coalesce(array_agg(u.old_hash) FILTER (WHERE u.old_hash <> 0 AND u.old_hash <> u.h), '{}'),
           coalesce(bool_or(u.pin_count > 0 AND u.old_hash <> u.h), FALSE)
    INTO removed, pinned FROM upd u;
    IF pinned THEN
        RAISE EXCEPTION 'pinned block' USING ERRCODE = 'KVR01';
    END IF;
    -- agreement: the other rank of a TP-2 bank (all the prototype handles) holds the same block at
    -- the same slot, found by its key
    WITH agreed AS (
        SELECT t.* FROM unnest(p_hashes, p_parents, p_positions, p_slots) AS t(h, p, pos, slot)
        WHERE p_tp = 2 AND EXISTS (SELECT 1 FROM proto_slot o
                                   WHERE o.bank_id = p_bank AND o.rank = 1 - p_rank AND o.slot = t.slot
                                     AND o.seq_hash = t.h AND o.parent_hash = coalesce(t.p, 0) AND o.position = t.pos)
    )
    SELECT coalesce(array_agg(a.h), '{}'), coalesce(array_agg(a.p), '{}'), coalesce(array_agg(a.pos), '{}'),
           coalesce(array_agg(a.slot), '{}')
    INTO s_h, s_p, s_pos, s_slot FROM agreed a;
    v_blocks := kvreuse_feed_blocks(cardinality(s_h) + cardinality(removed), s_h, s_p, s_pos, s_slot, NULL::TEXT[], removed);
    IF v_blocks IS NOT NULL THEN
        UPDATE retained_bank SET feed_seq = feed_seq + 1 WHERE bank_id = p_bank;
        INSERT INTO inventory_change (bank_id, seq, blocks)
        SELECT p_bank, feed_seq, v_blocks FROM retained_bank WHERE bank_id = p_bank;
    END IF;
    RETURN cardinality(s_h);
END $$;
