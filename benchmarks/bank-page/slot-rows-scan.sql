-- The same batch shape through the slot-row variant, finding a hash held at another slot by reading the rank's slot rows (layout.sql, proto_slot).
\set ON_ERROR_STOP 1
SELECT b.bank_id AS bank FROM retained_bank b ORDER BY b.bank_id OFFSET :bankno LIMIT 1 \gset
SELECT array_agg(h ORDER BY i)::text AS hashes, array_agg(p ORDER BY i)::text AS parents, array_agg(i ORDER BY i)::text AS positions, array_agg(i + :base ORDER BY i)::text AS slots
FROM (SELECT i, h, lag(h) OVER (ORDER BY i) p FROM (SELECT i, (random()*9e18)::bigint h FROM generate_series(0, :n - 1) i) x) y \gset
\timing on
SELECT proto_ingest_slots(:'bank', 0, 2, :'hashes', :'parents', :'positions', :'slots', TRUE);
SELECT proto_ingest_slots(:'bank', 1, 2, :'hashes', :'parents', :'positions', :'slots', TRUE);
\timing off
