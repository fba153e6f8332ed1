-- bank_block rows are written only by inventory ingestion, for a (bank, rank) it has just read from
-- bank_part under the bank's row lock, and bank_part rows are never deleted: the foreign key could
-- not fail, yet its check ran once per inserted row (a query per block, the largest single cost
-- of a 1,024-block batch). The primary key and the slot key stay.
ALTER TABLE bank_block DROP CONSTRAINT bank_block_bank_id_rank_fkey;
