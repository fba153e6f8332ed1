-- Donor selection (DESIGN §4): per-domain cost models, the lease fields the hint carries, and
-- change notifications so every replica's in-memory fleet directory follows the database.

-- Profitability model of a layout domain; absent → transport defaults. Calibrated from completed
-- transfers later (samples counts how many measurements the transfer figures are based on).
CREATE TABLE domain_cost_model (
    domain_id                 TEXT PRIMARY KEY REFERENCES layout_domain (domain_id),
    prefill_ms_per_token      DOUBLE PRECISION NOT NULL CHECK (prefill_ms_per_token >= 0),
    prefill_ms_per_token_sq   DOUBLE PRECISION NOT NULL DEFAULT 0 CHECK (prefill_ms_per_token_sq >= 0),
    transfer_setup_ms         DOUBLE PRECISION NOT NULL CHECK (transfer_setup_ms >= 0),
    transfer_gbytes_per_s     DOUBLE PRECISION NOT NULL CHECK (transfer_gbytes_per_s > 0),
    samples                   BIGINT           NOT NULL DEFAULT 0,
    updated_at                TIMESTAMPTZ      NOT NULL DEFAULT now(),
    updated_by                TEXT             NOT NULL
);

ALTER TABLE lease
    ADD COLUMN source_slot_runs JSONB,
    ADD COLUMN mm_lineage       TEXT,
    ADD COLUMN action_type      TEXT NOT NULL DEFAULT 'kv.fetch_gpu';

-- in-flight counting per donor and per target
CREATE INDEX lease_active_donor ON lease (donor_incarnation_id)
    WHERE state IN ('PROPOSED', 'SOURCE_PINNED', 'TRANSFERRING', 'DELIVERED', 'UNCERTAIN', 'RELEASING');
CREATE INDEX lease_active_target ON lease (target_incarnation_id)
    WHERE state IN ('PROPOSED', 'SOURCE_PINNED', 'TRANSFERRING', 'DELIVERED', 'UNCERTAIN', 'RELEASING');

CREATE FUNCTION kvreuse_notify_fleet() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_TABLE_NAME = 'engine_incarnation' THEN
        PERFORM pg_notify('kvreuse_fleet', 'incarnation:' || NEW.incarnation_id::text);
    ELSIF TG_TABLE_NAME = 'layout_domain' THEN
        PERFORM pg_notify('kvreuse_fleet', 'domain:' || NEW.domain_id);
    ELSE
        PERFORM pg_notify('kvreuse_fleet', 'cost:' || NEW.domain_id);
    END IF;
    RETURN NEW;
END;
$$;

CREATE TRIGGER engine_incarnation_notify AFTER INSERT OR UPDATE ON engine_incarnation
    FOR EACH ROW EXECUTE FUNCTION kvreuse_notify_fleet();
CREATE TRIGGER layout_domain_notify AFTER INSERT OR UPDATE ON layout_domain
    FOR EACH ROW EXECUTE FUNCTION kvreuse_notify_fleet();
CREATE TRIGGER domain_cost_model_notify AFTER INSERT OR UPDATE ON domain_cost_model
    FOR EACH ROW EXECUTE FUNCTION kvreuse_notify_fleet();
