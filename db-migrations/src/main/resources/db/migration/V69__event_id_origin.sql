-- A rank's event ids may count from 0 (as vLLM and Dynamo do) or from 1. Until the first batch is
-- applied, last_event_id 0 does not say that event 0 was applied: events_started does.
ALTER TABLE bank_part ADD COLUMN events_started BOOLEAN NOT NULL DEFAULT FALSE;
UPDATE bank_part SET events_started = TRUE WHERE last_event_id > 0;
