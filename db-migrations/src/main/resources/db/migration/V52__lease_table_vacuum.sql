-- Every lease updates its lease row five times and its commands, order, part, pins, destination and
-- slot runs once or twice: these tables collect dead row versions at the rate of the lease
-- throughput. Vacuum them after 2 % of their rows changed instead of PostgreSQL's 20 %, so index
-- scans on the hot paths do not wade through versions nobody can see any more.
ALTER TABLE lease                SET (autovacuum_vacuum_scale_factor = 0.02, autovacuum_analyze_scale_factor = 0.02);
ALTER TABLE engine_command       SET (autovacuum_vacuum_scale_factor = 0.02, autovacuum_analyze_scale_factor = 0.05);
ALTER TABLE transfer_order       SET (autovacuum_vacuum_scale_factor = 0.02, autovacuum_analyze_scale_factor = 0.05);
ALTER TABLE transfer_part        SET (autovacuum_vacuum_scale_factor = 0.02, autovacuum_analyze_scale_factor = 0.05);
ALTER TABLE lease_source_pin     SET (autovacuum_vacuum_scale_factor = 0.02);
ALTER TABLE lease_destination    SET (autovacuum_vacuum_scale_factor = 0.02);
ALTER TABLE destination_slot_run SET (autovacuum_vacuum_scale_factor = 0.02);
ALTER TABLE bank_block           SET (autovacuum_vacuum_scale_factor = 0.02);
