-- Leases end to end (DESIGN §3): the engine command channel, destination slot ranges that can never
-- be granted twice, quiescence evidence, order claims with a visibility timeout, and calibration.

CREATE EXTENSION IF NOT EXISTS btree_gist;

ALTER TABLE lease
    ADD COLUMN reason               TEXT,
    ADD COLUMN source_quiesced      BOOLEAN NOT NULL DEFAULT FALSE,
    ADD COLUMN destination_quiesced BOOLEAN NOT NULL DEFAULT FALSE,
    ADD COLUMN committed_blocks     INTEGER;

-- Sweeper scans: deadlines of the states a timer may move.
CREATE INDEX lease_due ON lease (state, ttl_deadline)
    WHERE state IN ('PROPOSED', 'SOURCE_PINNED', 'TRANSFERRING', 'DELIVERED');

-- Commands to engines (PIN, UNPIN to donors; DELIVERED, RELEASE to targets). Redelivered until
-- acknowledged: a delivery hides a command until visible_at, then it is handed out again.
CREATE TABLE engine_command (
    command_id      UUID PRIMARY KEY,
    incarnation_id  UUID        NOT NULL REFERENCES engine_incarnation (incarnation_id),
    lease_id        UUID        NOT NULL REFERENCES lease (lease_id),
    type            TEXT        NOT NULL CHECK (type IN ('PIN', 'UNPIN', 'DELIVERED', 'RELEASE')),
    rank            INTEGER     NOT NULL DEFAULT -1,
    created_at      TIMESTAMPTZ NOT NULL,
    visible_at      TIMESTAMPTZ NOT NULL,
    deliveries      INTEGER     NOT NULL DEFAULT 0,
    acked_at        TIMESTAMPTZ,
    ok              BOOLEAN,
    detail          TEXT,
    UNIQUE (lease_id, type, rank)
);
CREATE INDEX engine_command_pending ON engine_command (incarnation_id, visible_at) WHERE acked_at IS NULL;

-- A donor learns of its PIN work the moment the PROPOSED lease commits: one PIN command per rank,
-- written by the database so the selection's hot path stays one INSERT.
CREATE FUNCTION kvreuse_lease_pin_commands() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO engine_command (command_id, incarnation_id, lease_id, type, rank, created_at, visible_at)
    SELECT gen_random_uuid(), NEW.donor_incarnation_id, NEW.lease_id, 'PIN', r.rank, NEW.created_at, '-infinity'
    FROM incarnation_rank r WHERE r.incarnation_id = NEW.donor_incarnation_id;
    RETURN NEW;
END;
$$;
CREATE TRIGGER lease_pin_commands AFTER INSERT ON lease
    FOR EACH ROW WHEN (NEW.state = 'PROPOSED') EXECUTE FUNCTION kvreuse_lease_pin_commands();

CREATE FUNCTION kvreuse_notify_command() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('kvreuse_commands', NEW.incarnation_id::text);
    RETURN NEW;
END;
$$;
CREATE TRIGGER engine_command_notify AFTER INSERT ON engine_command
    FOR EACH ROW EXECUTE FUNCTION kvreuse_notify_command();

-- One row per destination slot run; two held runs of one target rank never overlap.
CREATE TABLE destination_slot_run (
    lease_id        UUID      NOT NULL REFERENCES lease (lease_id),
    rank            INTEGER   NOT NULL,
    incarnation_id  UUID      NOT NULL REFERENCES engine_incarnation (incarnation_id),
    slots           INT4RANGE NOT NULL,
    held            BOOLEAN   NOT NULL DEFAULT TRUE,
    EXCLUDE USING gist (incarnation_id WITH =, rank WITH =, slots WITH &&) WHERE (held)
);
CREATE INDEX destination_slot_run_lease ON destination_slot_run (lease_id);
CREATE INDEX lease_destination_incarnation ON lease_destination (incarnation_id) WHERE state <> 'RELEASED';
CREATE INDEX lease_source_pin_bank ON lease_source_pin (bank_id) WHERE state <> 'RELEASED';

-- Orders: who claimed them under which agent epoch, when a part report acknowledged them, and
-- how often they were handed out.
ALTER TABLE node_agent ADD COLUMN heartbeats BIGINT NOT NULL DEFAULT 0;
ALTER TABLE transfer_order
    ADD COLUMN donor_host_id  TEXT,
    ADD COLUMN acked_at       TIMESTAMPTZ,
    ADD COLUMN claims         INTEGER NOT NULL DEFAULT 0;
CREATE INDEX transfer_order_claimed ON transfer_order (host_id, claimed_at) WHERE state = 'CLAIMED' AND acked_at IS NULL;

CREATE FUNCTION kvreuse_notify_order() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('kvreuse_orders', NEW.host_id);
    RETURN NEW;
END;
$$;
CREATE TRIGGER transfer_order_notify AFTER INSERT ON transfer_order
    FOR EACH ROW EXECUTE FUNCTION kvreuse_notify_order();

-- Calibration: exponentially weighted moments of (bytes per rank, realised ms) per domain, from
-- which the transfer setup and bandwidth of domain_cost_model are fitted.
CREATE TABLE transfer_calibration (
    domain_id  TEXT PRIMARY KEY REFERENCES layout_domain (domain_id),
    weight     DOUBLE PRECISION NOT NULL,
    mean_x     DOUBLE PRECISION NOT NULL,
    mean_y     DOUBLE PRECISION NOT NULL,
    mean_xx    DOUBLE PRECISION NOT NULL,
    mean_xy    DOUBLE PRECISION NOT NULL,
    samples    BIGINT           NOT NULL,
    updated_at TIMESTAMPTZ      NOT NULL
);
