-- Inventory change feed: per-bank contiguous sequence numbers written under the bank's row lock,
-- so every replica applies a bank's index changes in commit order (DESIGN §6).
ALTER TABLE retained_bank
    ADD COLUMN feed_seq          BIGINT  NOT NULL DEFAULT 0,
    ADD COLUMN rank_disagreement BOOLEAN NOT NULL DEFAULT FALSE;

CREATE TABLE inventory_change (
    bank_id  UUID        NOT NULL REFERENCES retained_bank (bank_id),
    seq      BIGINT      NOT NULL,
    at       TIMESTAMPTZ NOT NULL DEFAULT now(),
    ops      JSONB       NOT NULL,
    PRIMARY KEY (bank_id, seq)
);
CREATE INDEX inventory_change_at ON inventory_change (at);

-- eligibility checks look a hash up across the ranks of one bank
CREATE INDEX bank_block_hash ON bank_block (bank_id, seq_hash);

-- at most one live bank per incarnation
CREATE UNIQUE INDEX retained_bank_one_live ON retained_bank (incarnation_id) WHERE state <> 'DROPPED';
