-- An engine heartbeat only moves engine_incarnation.last_heartbeat_at, which no replica caches: it
-- no longer notifies kvreuse_fleet, so heartbeats stop costing every replica a reload of the row
-- (and stop dropping the command channel's cached ownership). Every other change notifies as before.
DROP TRIGGER engine_incarnation_notify ON engine_incarnation;

CREATE TRIGGER engine_incarnation_notify AFTER INSERT ON engine_incarnation
    FOR EACH ROW EXECUTE FUNCTION kvreuse_notify_fleet();

CREATE TRIGGER engine_incarnation_change_notify AFTER UPDATE ON engine_incarnation
    FOR EACH ROW
    WHEN ((to_jsonb(OLD) - 'last_heartbeat_at') IS DISTINCT FROM (to_jsonb(NEW) - 'last_heartbeat_at'))
    EXECUTE FUNCTION kvreuse_notify_fleet();
