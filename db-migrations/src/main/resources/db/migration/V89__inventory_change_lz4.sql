-- Every applied inventory batch appends one feed row of about 90 KB of JSON (1,024 ops), which
-- PostgreSQL compresses into TOAST. With the default pglz that compression is one of the larger
-- costs of a batch's statement (about 1.5 ms of CPU per feed row on the 2-core benchmark machine); lz4
-- does it several times faster at about the same size. Rows already stored keep their method. A
-- server built without lz4 (the embedded PostgreSQL of the benchmarks and tests is one) keeps pglz.
DO $$
BEGIN
    ALTER TABLE inventory_change ALTER COLUMN ops SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported OR invalid_parameter_value THEN
    RAISE NOTICE 'lz4 is not available; inventory_change.ops keeps its compression';
END;
$$;
