-- kvreuse core schema (DESIGN §3). PostgreSQL is the source of truth; the invariants the
-- database can hold itself are declared here. Never edit an applied migration: add V<n+1>.

-- u64 block hashes are stored as BIGINT holding the same 64 bits (two's complement).

CREATE TABLE api_token (
    token_id     UUID PRIMARY KEY,
    role         TEXT        NOT NULL CHECK (role IN ('ROUTER', 'ENGINE', 'AGENT', 'OPERATOR')),
    subject      TEXT        NOT NULL CHECK (length(subject) BETWEEN 1 AND 200),
    description  TEXT        NOT NULL DEFAULT '',
    token_hash   BYTEA       NOT NULL UNIQUE,
    bootstrap    BOOLEAN     NOT NULL DEFAULT FALSE,
    created_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
    created_by   TEXT        NOT NULL,
    revoked_at   TIMESTAMPTZ,
    revoked_by   TEXT
);

CREATE TABLE layout_domain (
    domain_id                 TEXT PRIMARY KEY,
    status                    TEXT        NOT NULL CHECK (status IN ('CERTIFIED', 'REVOKED')),
    contract                  JSONB       NOT NULL,
    model_id                  TEXT        NOT NULL,
    transport_class           TEXT        NOT NULL CHECK (transport_class IN ('GPU_CUDA_IPC', 'GPU_MNNVL', 'CPU_TP1')),
    block_size_tokens         INTEGER     NOT NULL CHECK (block_size_tokens > 0),
    bytes_per_block_per_rank  BIGINT      NOT NULL CHECK (bytes_per_block_per_rank > 0),
    num_kv_heads              INTEGER     NOT NULL CHECK (num_kv_heads > 0),
    tp_size                   INTEGER     NOT NULL CHECK (tp_size BETWEEN 1 AND 64),
    dp_size                   INTEGER     NOT NULL CHECK (dp_size = 1),
    pp_size                   INTEGER     NOT NULL CHECK (pp_size = 1),
    cp_size                   INTEGER     NOT NULL CHECK (cp_size = 1),
    certified_at              TIMESTAMPTZ NOT NULL DEFAULT now(),
    certified_by              TEXT        NOT NULL,
    revoked_at                TIMESTAMPTZ,
    revoked_by                TEXT,
    revoke_reason             TEXT,
    CHECK (transport_class <> 'CPU_TP1' OR tp_size = 1),
    CHECK ((status = 'REVOKED') = (revoked_at IS NOT NULL))
);

CREATE TABLE engine_incarnation (
    incarnation_id     UUID PRIMARY KEY,
    stable_name        TEXT CHECK (stable_name IS NULL OR length(stable_name) BETWEEN 1 AND 253),
    role               TEXT        NOT NULL CHECK (role IN ('PREFILL', 'DECODE')),
    domain_id          TEXT        NOT NULL REFERENCES layout_domain (domain_id),
    host_id            TEXT        NOT NULL,
    fabric_domain      TEXT,
    control_endpoint   TEXT        NOT NULL,
    capabilities       TEXT[]      NOT NULL DEFAULT '{}',
    state              TEXT        NOT NULL CHECK (state IN ('REGISTERED', 'READY', 'DRAINING', 'EXITED',
                                                             'SUSPECT', 'LOST', 'RECLAIM_PENDING', 'RECLAIMED')),
    fencing_epoch      BIGINT      NOT NULL DEFAULT 1 CHECK (fencing_epoch >= 1),
    owner_subject      TEXT        NOT NULL,
    registered_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
    last_heartbeat_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    state_changed_at   TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- A stable name is held by every incarnation that has not exited cleanly or been reclaimed.
CREATE UNIQUE INDEX engine_incarnation_stable_name_held
    ON engine_incarnation (stable_name)
    WHERE stable_name IS NOT NULL AND state NOT IN ('EXITED', 'RECLAIMED');
CREATE INDEX engine_incarnation_state ON engine_incarnation (state);
CREATE INDEX engine_incarnation_domain ON engine_incarnation (domain_id);
CREATE INDEX engine_incarnation_host ON engine_incarnation (host_id);

CREATE TABLE incarnation_rank (
    incarnation_id  UUID    NOT NULL REFERENCES engine_incarnation (incarnation_id),
    rank            INTEGER NOT NULL CHECK (rank >= 0),
    gpu_ordinal     INTEGER NOT NULL CHECK (gpu_ordinal >= 0),
    gpu_uuid        TEXT    NOT NULL,
    host_id         TEXT    NOT NULL,
    -- false once the incarnation is EXITED or RECLAIMED; kept in step in the same transaction
    live            BOOLEAN NOT NULL DEFAULT TRUE,
    PRIMARY KEY (incarnation_id, rank)
);

-- A GPU ordinal is unique per host among live incarnations.
CREATE UNIQUE INDEX incarnation_rank_live_gpu ON incarnation_rank (host_id, gpu_ordinal) WHERE live;

CREATE TABLE retained_bank (
    bank_id          UUID PRIMARY KEY,
    incarnation_id   UUID        NOT NULL REFERENCES engine_incarnation (incarnation_id),
    capacity_blocks  INTEGER     NOT NULL CHECK (capacity_blocks > 0),
    bank_epoch       BIGINT      NOT NULL DEFAULT 1 CHECK (bank_epoch >= 1),
    state            TEXT        NOT NULL CHECK (state IN ('PENDING', 'PUBLISHED', 'UNPUBLISHED', 'DROPPED')),
    unpublished_reason TEXT,
    created_at       TIMESTAMPTZ NOT NULL DEFAULT now(),
    state_changed_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX retained_bank_incarnation ON retained_bank (incarnation_id);

CREATE TABLE bank_part (
    bank_id          UUID    NOT NULL REFERENCES retained_bank (bank_id),
    rank             INTEGER NOT NULL CHECK (rank >= 0),
    region_ref       TEXT    NOT NULL,
    bytes_per_block  BIGINT  NOT NULL CHECK (bytes_per_block > 0),
    ready            BOOLEAN NOT NULL DEFAULT FALSE,
    last_event_id    BIGINT  NOT NULL DEFAULT 0 CHECK (last_event_id >= 0),
    needs_snapshot   BOOLEAN NOT NULL DEFAULT FALSE,
    native_clears    BIGINT  NOT NULL DEFAULT 0,
    PRIMARY KEY (bank_id, rank)
);

CREATE TABLE bank_block (
    bank_id      UUID    NOT NULL,
    rank         INTEGER NOT NULL,
    seq_hash     BIGINT  NOT NULL,
    parent_hash  BIGINT,
    position     INTEGER NOT NULL CHECK (position >= 0),
    slot         INTEGER NOT NULL CHECK (slot >= 0),
    mm_lineage   TEXT,
    pin_count    INTEGER NOT NULL DEFAULT 0 CHECK (pin_count >= 0),
    PRIMARY KEY (bank_id, rank, seq_hash),
    UNIQUE (bank_id, rank, slot),
    FOREIGN KEY (bank_id, rank) REFERENCES bank_part (bank_id, rank)
);

CREATE TABLE lease (
    lease_id                UUID PRIMARY KEY,
    request_id              TEXT        NOT NULL,
    state                   TEXT        NOT NULL CHECK (state IN ('PROPOSED', 'SOURCE_PINNED', 'TRANSFERRING', 'DELIVERED',
                                                                  'COMMITTED', 'RELEASING', 'RELEASED', 'REFUSED',
                                                                  'EXPIRED', 'FAILED', 'UNCERTAIN')),
    outcome                 TEXT,
    domain_id               TEXT        NOT NULL REFERENCES layout_domain (domain_id),
    donor_incarnation_id    UUID        NOT NULL REFERENCES engine_incarnation (incarnation_id),
    donor_epoch             BIGINT      NOT NULL,
    bank_id                 UUID        NOT NULL REFERENCES retained_bank (bank_id),
    bank_epoch              BIGINT      NOT NULL,
    target_incarnation_id   UUID        NOT NULL REFERENCES engine_incarnation (incarnation_id),
    target_epoch            BIGINT      NOT NULL,
    local_prefix_blocks     INTEGER     NOT NULL CHECK (local_prefix_blocks >= 0),
    fetch_blocks            INTEGER     NOT NULL CHECK (fetch_blocks > 0),
    seq_hashes              BIGINT[]    NOT NULL,
    transport_class         TEXT        NOT NULL,
    predicted_transfer_ms   DOUBLE PRECISION NOT NULL,
    predicted_recompute_ms  DOUBLE PRECISION NOT NULL,
    budget_bytes            BIGINT      NOT NULL,
    manifest_bytes          INTEGER     NOT NULL,
    created_at              TIMESTAMPTZ NOT NULL DEFAULT now(),
    ttl_deadline            TIMESTAMPTZ NOT NULL,
    transfer_deadline       TIMESTAMPTZ NOT NULL,
    abandon_deadline        TIMESTAMPTZ NOT NULL,
    state_changed_at        TIMESTAMPTZ NOT NULL DEFAULT now(),
    version                 BIGINT      NOT NULL DEFAULT 0,
    CHECK (donor_incarnation_id <> target_incarnation_id)
);
CREATE INDEX lease_state ON lease (state);
CREATE INDEX lease_donor ON lease (donor_incarnation_id);
CREATE INDEX lease_target ON lease (target_incarnation_id);

-- Per-rank pins of source blocks on the donor's bank.
CREATE TABLE lease_source_pin (
    lease_id     UUID    NOT NULL REFERENCES lease (lease_id),
    rank         INTEGER NOT NULL CHECK (rank >= 0),
    bank_id      UUID    NOT NULL REFERENCES retained_bank (bank_id),
    slot_runs    JSONB   NOT NULL,
    blocks       INTEGER NOT NULL CHECK (blocks > 0),
    state        TEXT    NOT NULL CHECK (state IN ('REQUESTED', 'HELD', 'REFUSED', 'RELEASING', 'RELEASED')),
    updated_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (lease_id, rank)
);

-- Per-rank destination allocations on the target.
CREATE TABLE lease_destination (
    lease_id        UUID    NOT NULL REFERENCES lease (lease_id),
    rank            INTEGER NOT NULL CHECK (rank >= 0),
    incarnation_id  UUID    NOT NULL REFERENCES engine_incarnation (incarnation_id),
    region_ref      TEXT    NOT NULL,
    slot_runs       JSONB   NOT NULL,
    blocks          INTEGER NOT NULL CHECK (blocks > 0),
    state           TEXT    NOT NULL CHECK (state IN ('HELD', 'RELEASING', 'RELEASED')),
    updated_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (lease_id, rank)
);

CREATE TABLE node_agent (
    host_id            TEXT PRIMARY KEY,
    owner_subject      TEXT        NOT NULL,
    gpus               JSONB       NOT NULL,
    state              TEXT        NOT NULL CHECK (state IN ('ONLINE', 'SUSPECT', 'OFFLINE')),
    registered_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
    last_heartbeat_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    agent_epoch        BIGINT      NOT NULL DEFAULT 1
);

-- NIXL metadata blobs carry raw addresses: kept apart, never logged, never shown in full.
CREATE TABLE nixl_agent_metadata (
    host_id       TEXT    NOT NULL REFERENCES node_agent (host_id),
    gpu_ordinal   INTEGER NOT NULL CHECK (gpu_ordinal >= 0),
    agent_name    TEXT    NOT NULL,
    metadata      BYTEA   NOT NULL,
    updated_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (host_id, gpu_ordinal)
);

CREATE TABLE transfer_order (
    order_id      UUID PRIMARY KEY,
    lease_id      UUID        NOT NULL UNIQUE REFERENCES lease (lease_id),
    host_id       TEXT        NOT NULL,
    state         TEXT        NOT NULL CHECK (state IN ('QUEUED', 'CLAIMED', 'DONE', 'FAILED', 'UNCERTAIN', 'QUIESCED')),
    created_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
    claimed_at    TIMESTAMPTZ,
    claimed_by    TEXT,
    deadline      TIMESTAMPTZ NOT NULL
);
CREATE INDEX transfer_order_queue ON transfer_order (host_id, created_at) WHERE state = 'QUEUED';

CREATE TABLE transfer_part (
    order_id         UUID    NOT NULL REFERENCES transfer_order (order_id),
    rank             INTEGER NOT NULL CHECK (rank >= 0),
    source           JSONB   NOT NULL,
    destination      JSONB   NOT NULL,
    slot_runs        JSONB   NOT NULL,
    bytes            BIGINT  NOT NULL CHECK (bytes >= 0),
    state            TEXT    NOT NULL CHECK (state IN ('QUEUED', 'RUNNING', 'DONE', 'FAILED', 'UNCERTAIN', 'QUIESCED')),
    bytes_moved      BIGINT  NOT NULL DEFAULT 0,
    duration_us      BIGINT,
    native_status    INTEGER,
    detail           TEXT,
    updated_at       TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (order_id, rank)
);

CREATE TABLE cleanup_plan (
    plan_id              UUID PRIMARY KEY,
    incarnation_id       UUID        NOT NULL REFERENCES engine_incarnation (incarnation_id),
    state                TEXT        NOT NULL CHECK (state IN ('PLANNED', 'EXECUTING', 'EXECUTED', 'STALE')),
    fingerprint          TEXT        NOT NULL,
    plan                 JSONB       NOT NULL,
    created_at           TIMESTAMPTZ NOT NULL DEFAULT now(),
    created_by           TEXT        NOT NULL,
    executed_at          TIMESTAMPTZ,
    executed_by          TEXT,
    reason               TEXT,
    quiescence_attested  BOOLEAN,
    outcome              JSONB
);

CREATE TABLE cleanup_action (
    action_id    BIGSERIAL PRIMARY KEY,
    plan_id      UUID        NOT NULL REFERENCES cleanup_plan (plan_id),
    kind         TEXT        NOT NULL,
    target       TEXT        NOT NULL,
    detail       JSONB,
    at           TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- Append-only trail of operator actions and state transitions.
CREATE TABLE audit_event (
    event_id      BIGSERIAL PRIMARY KEY,
    at            TIMESTAMPTZ NOT NULL DEFAULT now(),
    actor         TEXT        NOT NULL,
    subject_type  TEXT        NOT NULL,
    subject_id    TEXT        NOT NULL,
    action        TEXT        NOT NULL,
    from_state    TEXT,
    to_state      TEXT,
    epoch         BIGINT,
    reason        TEXT,
    detail        JSONB
);
CREATE INDEX audit_event_subject ON audit_event (subject_id, event_id);
CREATE INDEX audit_event_actor ON audit_event (actor, event_id);
CREATE INDEX audit_event_at ON audit_event (at);

CREATE FUNCTION audit_event_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'audit_event is append-only';
END;
$$;
CREATE TRIGGER audit_event_no_update BEFORE UPDATE OR DELETE ON audit_event
    FOR EACH ROW EXECUTE FUNCTION audit_event_append_only();

-- One row: the operator-editable reuse settings document.
CREATE TABLE reuse_settings (
    id          INTEGER PRIMARY KEY CHECK (id = 1),
    settings    JSONB       NOT NULL,
    version     BIGINT      NOT NULL DEFAULT 1,
    updated_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_by  TEXT        NOT NULL
);

-- Idempotency keys for creates that clients retry.
CREATE TABLE idempotency_key (
    scope        TEXT        NOT NULL,
    key          TEXT        NOT NULL,
    request_hash TEXT        NOT NULL,
    status       INTEGER     NOT NULL,
    response     JSONB       NOT NULL,
    created_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (scope, key)
);
