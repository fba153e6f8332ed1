-- The heartbeat sweeper looks for incarnations whose last heartbeat is older than a cutoff among
-- those that can still go SUSPECT or LOST; this keeps each sweep an index range scan however many
-- exited incarnations accumulate.
CREATE INDEX engine_incarnation_liveness
    ON engine_incarnation (last_heartbeat_at)
    WHERE state IN ('REGISTERED', 'READY', 'DRAINING', 'SUSPECT');

-- Engines list their own incarnations (GET /api/v1/incarnations with an ENGINE token).
CREATE INDEX engine_incarnation_owner ON engine_incarnation (owner_subject, registered_at DESC);
