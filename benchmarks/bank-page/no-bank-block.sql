-- An experiment, never a migration of the product: the part of kvreuse_ingest_batch that replaces
-- its bank_block work, so that an ingestion run measures what the rest of the path costs (HTTP, the
-- control plane, the bank lock, the stream checks, the feed row, NOTIFY, the commit and every
-- replica's index apply). benchmarks/bank-page/ceiling.sh splices it into the product's current
-- function (the latest migration that defines it), in place of everything from the parents' check
-- to the final statement, and adds the result as the last migration of a scratch build; the lock,
-- the checks and the final statement stay the product's own.
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
