-- The lease sweeper looks for passed deadlines twice a second. One index per deadline, holding only
-- the leases in the states that deadline applies to, lets each of its three lookups be an ordered
-- index range scan that stops at the first deadline still ahead, whatever the size of the history;
-- a plain index scan also marks entries of rows that moved on as dead, so later sweeps skip them.
DROP INDEX IF EXISTS lease_due;
CREATE INDEX lease_due_ttl ON lease (ttl_deadline) WHERE state = 'PROPOSED';
CREATE INDEX lease_due_transfer ON lease (transfer_deadline) WHERE state IN ('SOURCE_PINNED', 'TRANSFERRING');
CREATE INDEX lease_due_abandon ON lease (abandon_deadline) WHERE state = 'DELIVERED';
