-- An engine's own KV event stream (vLLM KVEvents or Mooncake RFC #1527 over ZMQ), one per rank,
-- which the node agent of the bank's host subscribes to and forwards into ordered ingestion.
CREATE TABLE bank_event_source (
    bank_id             UUID        PRIMARY KEY REFERENCES retained_bank (bank_id),
    format              TEXT        NOT NULL CHECK (format IN ('VLLM_KV_EVENTS', 'MOONCAKE_RFC1527')),
    all_blocks_cleared  TEXT        NOT NULL CHECK (all_blocks_cleared IN ('NATIVE_CACHE_CLEARED', 'BANK_RESET')),
    revision            BIGINT      NOT NULL DEFAULT 1,
    updated_at          TIMESTAMPTZ NOT NULL
);

CREATE TABLE bank_event_stream (
    bank_id          UUID    NOT NULL REFERENCES bank_event_source (bank_id) ON DELETE CASCADE,
    rank             INTEGER NOT NULL CHECK (rank BETWEEN 0 AND 63),
    endpoint         TEXT    NOT NULL CHECK (length(endpoint) BETWEEN 1 AND 300),
    replay_endpoint  TEXT    CHECK (length(replay_endpoint) BETWEEN 1 AND 300),
    topic            TEXT    CHECK (length(topic) <= 256),
    PRIMARY KEY (bank_id, rank)
);

-- The engine's sequence number of the last engine batch applied to the rank (through events or a
-- snapshot): where the node agent resumes after its own restart.
ALTER TABLE bank_part ADD COLUMN source_sequence BIGINT;
