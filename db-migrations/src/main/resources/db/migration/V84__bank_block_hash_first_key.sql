-- bank_block had three indexes: the key (bank_id, rank, seq_hash), the slot key (bank_id, rank,
-- slot) and bank_block_hash (bank_id, seq_hash) for the cross-rank agreement lookups. Every
-- inserted or deleted block paid for all three. A key of (bank_id, seq_hash, rank) serves both
-- hash lookups: one rank's (bank_id = ? AND rank = ? AND seq_hash = ANY(?)) and every rank's
-- (bank_id = ? AND seq_hash = ANY(?)), so the separate hash index goes and a block write maintains
-- two indexes. Whole-rank scans (bank_id = ? AND rank = ?) use the slot key.
ALTER TABLE bank_block DROP CONSTRAINT bank_block_pkey;
ALTER TABLE bank_block ADD CONSTRAINT bank_block_pkey PRIMARY KEY (bank_id, seq_hash, rank);
DROP INDEX bank_block_hash;
