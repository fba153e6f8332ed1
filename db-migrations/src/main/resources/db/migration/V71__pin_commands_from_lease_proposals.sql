-- The donor's PIN commands are a lease rule, so the lease package writes them: the statement that
-- inserts PROPOSED leases inserts one PIN command per donor rank in the same statement (visible at
-- once, as the trigger made them). The trigger that did it goes; the wake-up trigger on
-- engine_command (pg_notify) stays.

DROP TRIGGER lease_pin_commands ON lease;
DROP FUNCTION kvreuse_lease_pin_commands();
