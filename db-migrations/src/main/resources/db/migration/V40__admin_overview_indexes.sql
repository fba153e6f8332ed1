-- The admin overview counts finished leases and orders of the last hour, and samples bytes moved
-- by transfer parts finished since its previous point: without these, each refresh would scan the
-- whole history.
CREATE INDEX IF NOT EXISTS lease_created_at ON lease (created_at);
CREATE INDEX IF NOT EXISTS transfer_order_created_at ON transfer_order (created_at);
CREATE INDEX IF NOT EXISTS transfer_part_updated_at ON transfer_part (updated_at);
