-- The last gap in a rank's live stream that the engine's replay socket filled and that is on
-- record (audited EVENT_GAP_REPLAYED): sequences replayed_from .. replayed_until - 1. The same
-- report again (the agent retrying a call whose answer it lost) is not audited a second time.
ALTER TABLE bank_event_stream ADD COLUMN replayed_from BIGINT;
ALTER TABLE bank_event_stream ADD COLUMN replayed_until BIGINT;
