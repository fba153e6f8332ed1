-- A transfer part's two ends as columns instead of wire JSON: the control plane builds the order
-- an agent receives (its protocol records, NIXL agent names included) in Java from these rows.
-- The source end's slot runs are the part's slot_runs; its registered region is its own region.
ALTER TABLE transfer_part
    ADD COLUMN source_host_id          TEXT,
    ADD COLUMN source_gpu_ordinal      INTEGER CHECK (source_gpu_ordinal >= 0),
    ADD COLUMN source_region_ref       TEXT,
    ADD COLUMN destination_host_id     TEXT,
    ADD COLUMN destination_gpu_ordinal INTEGER CHECK (destination_gpu_ordinal >= 0),
    ADD COLUMN destination_region_ref  TEXT,
    ADD COLUMN destination_slot_runs   JSONB,
    ADD COLUMN destination_regions     TEXT[],
    ADD COLUMN bytes_per_block         BIGINT CHECK (bytes_per_block > 0);

UPDATE transfer_part SET
    source_host_id          = source ->> 'hostId',
    source_gpu_ordinal      = (source ->> 'gpuOrdinal')::INTEGER,
    source_region_ref       = source ->> 'regionRef',
    destination_host_id     = destination ->> 'hostId',
    destination_gpu_ordinal = (destination ->> 'gpuOrdinal')::INTEGER,
    destination_region_ref  = destination ->> 'regionRef',
    destination_slot_runs   = destination -> 'slotRuns',
    destination_regions     = CASE WHEN jsonb_typeof(destination -> 'registeredRegions') = 'array'
                                   THEN ARRAY(SELECT jsonb_array_elements_text(destination -> 'registeredRegions'))
                                   ELSE ARRAY[destination ->> 'regionRef'] END,
    bytes_per_block         = (source ->> 'bytesPerBlock')::BIGINT;

ALTER TABLE transfer_part
    ALTER COLUMN source_host_id          SET NOT NULL,
    ALTER COLUMN source_gpu_ordinal      SET NOT NULL,
    ALTER COLUMN source_region_ref       SET NOT NULL,
    ALTER COLUMN destination_host_id     SET NOT NULL,
    ALTER COLUMN destination_gpu_ordinal SET NOT NULL,
    ALTER COLUMN destination_region_ref  SET NOT NULL,
    ALTER COLUMN destination_slot_runs   SET NOT NULL,
    ALTER COLUMN destination_regions     SET NOT NULL,
    ALTER COLUMN bytes_per_block         SET NOT NULL,
    DROP COLUMN source,
    DROP COLUMN destination;
