-- The change feed's ops are written once and read back whole by replicas, never queried inside:
-- plain json keeps the text as written and spares the jsonb parse of a 1,024-op batch on every
-- write and its re-rendering on every read.
ALTER TABLE inventory_change ALTER COLUMN ops TYPE json USING ops::json;
