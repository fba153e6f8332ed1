-- Donor-selection answers per minute, fleet-wide, for the overview's headline: every replica adds
-- what its decision counters gained since its previous flush (answers, and the prompt tokens the
-- targets did not hold yet), so the hint rate over a chosen window is one range read of this
-- small table, never a scan of the selections themselves (which are not stored).
CREATE TABLE selection_minute (
    minute        TIMESTAMPTZ NOT NULL CHECK (date_trunc('minute', minute) = minute),
    decision      TEXT        NOT NULL CHECK (decision IN ('HINT', 'NO_HINT')),
    reason        TEXT        NOT NULL CHECK (length(reason) BETWEEN 1 AND 64),
    answers       BIGINT      NOT NULL CHECK (answers >= 0),
    asked_tokens  BIGINT      NOT NULL CHECK (asked_tokens >= 0),
    PRIMARY KEY (minute, decision, reason)
);
