-- One eviction batch of :n new blocks at slots :base.. on both ranks of bank number :bankno, through
-- the product's kvreuse_ingest_batch (each call its own transaction, synchronous_commit=on).
\set ON_ERROR_STOP 1
SELECT b.bank_id AS bank, i.owner_subject AS subj FROM retained_bank b JOIN engine_incarnation i USING (incarnation_id) ORDER BY b.bank_id OFFSET :bankno LIMIT 1 \gset
SELECT array_agg(h ORDER BY i)::text AS hashes, array_agg(p ORDER BY i)::text AS parents, array_agg(i ORDER BY i)::text AS positions, array_agg(i + :base ORDER BY i)::text AS slots, max(i + :base) AS maxslot
FROM (SELECT i, h, lag(h) OVER (ORDER BY i) p FROM (SELECT i, (random()*9e18)::bigint h FROM generate_series(0, :n - 1) i) x) y \gset
\timing on
SELECT kvreuse_ingest_batch(:'bank', 0, :'subj', NULL, (SELECT last_event_id + 1 FROM bank_part WHERE bank_id = :'bank' AND rank = 0), (SELECT last_event_id + 1 FROM bank_part WHERE bank_id = :'bank' AND rank = 0),
  :'hashes', :'parents', :'positions', :'slots', '{NULL}', '{}', 0, NULL, :maxslot, '{}', '{}', 'kvx', '1000', '5000', 'bench');
SELECT kvreuse_ingest_batch(:'bank', 1, :'subj', NULL, (SELECT last_event_id + 1 FROM bank_part WHERE bank_id = :'bank' AND rank = 1), (SELECT last_event_id + 1 FROM bank_part WHERE bank_id = :'bank' AND rank = 1),
  :'hashes', :'parents', :'positions', :'slots', '{NULL}', '{}', 0, NULL, :maxslot, '{}', '{}', 'kvx', '1000', '5000', 'bench');
\timing off
