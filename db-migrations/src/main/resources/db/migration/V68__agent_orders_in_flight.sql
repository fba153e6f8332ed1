-- The node-agents page counts each host's orders in flight (queued, claimed or uncertain): an
-- index on just those rows keeps the count proportional to the work in flight, not to history.
CREATE INDEX transfer_order_in_flight ON transfer_order (host_id, state)
    WHERE state IN ('QUEUED', 'CLAIMED', 'UNCERTAIN');
