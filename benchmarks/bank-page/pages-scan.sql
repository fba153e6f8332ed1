-- The same batch shape through the page prototype (layout.sql), with the hashes the batch evicts
-- named by hash as well (an eviction's BlockRemoved) and found by scanning the rank's pages.
\set ON_ERROR_STOP 1
SELECT b.bank_id AS bank FROM retained_bank b ORDER BY b.bank_id OFFSET :bankno LIMIT 1 \gset
SELECT array_agg(h ORDER BY i)::text AS hashes, array_agg(p ORDER BY i)::text AS parents, array_agg(i ORDER BY i)::text AS positions, array_agg(i + :base ORDER BY i)::text AS slots
FROM (SELECT i, h, lag(h) OVER (ORDER BY i) p FROM (SELECT i, (random()*9e18)::bigint h FROM generate_series(0, :n - 1) i) x) y \gset
SELECT coalesce(array_agg(g.hashes[s.slot - g.page * :P + 1]) FILTER (WHERE g.hashes[s.slot - g.page * :P + 1] <> 0), '{}')::text AS removed
FROM generate_series(:base, :base + :n - 1) s(slot) JOIN proto_page g ON g.bank_id = :'bank' AND g.rank = 0 AND g.page = s.slot / :P \gset
\timing on
SELECT proto_ingest(:'bank', 0, 2, :'hashes', :'parents', :'positions', :'slots', :P, FALSE, :'removed');
SELECT proto_ingest(:'bank', 1, 2, :'hashes', :'parents', :'positions', :'slots', :P, FALSE, :'removed');
\timing off
