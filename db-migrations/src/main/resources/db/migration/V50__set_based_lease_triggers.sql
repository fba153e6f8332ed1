-- Lease reports now arrive in batches (one statement inserts the PROPOSED leases of many selections,
-- the commands and orders of many leases). The row-level triggers that queued PIN commands and sent
-- wake-ups ran once per row; these statement-level triggers do the same work once per statement,
-- from the statement's transition table, with one notification per incarnation or host.

DROP TRIGGER lease_pin_commands ON lease;
DROP FUNCTION kvreuse_lease_pin_commands();

CREATE FUNCTION kvreuse_lease_pin_commands() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO engine_command (command_id, incarnation_id, lease_id, type, rank, created_at, visible_at)
    SELECT gen_random_uuid(), n.donor_incarnation_id, n.lease_id, 'PIN', r.rank, n.created_at, '-infinity'
    FROM new_leases n JOIN incarnation_rank r ON r.incarnation_id = n.donor_incarnation_id
    WHERE n.state = 'PROPOSED';
    RETURN NULL;
END;
$$;
CREATE TRIGGER lease_pin_commands AFTER INSERT ON lease
    REFERENCING NEW TABLE AS new_leases
    FOR EACH STATEMENT EXECUTE FUNCTION kvreuse_lease_pin_commands();

DROP TRIGGER engine_command_notify ON engine_command;
DROP FUNCTION kvreuse_notify_command();

CREATE FUNCTION kvreuse_notify_command() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('kvreuse_commands', i::text)
    FROM (SELECT DISTINCT incarnation_id AS i FROM new_commands) AS d;
    RETURN NULL;
END;
$$;
CREATE TRIGGER engine_command_notify AFTER INSERT ON engine_command
    REFERENCING NEW TABLE AS new_commands
    FOR EACH STATEMENT EXECUTE FUNCTION kvreuse_notify_command();

DROP TRIGGER transfer_order_notify ON transfer_order;
DROP FUNCTION kvreuse_notify_order();

CREATE FUNCTION kvreuse_notify_order() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('kvreuse_orders', h)
    FROM (SELECT DISTINCT host_id AS h FROM new_orders) AS d;
    RETURN NULL;
END;
$$;
CREATE TRIGGER transfer_order_notify AFTER INSERT ON transfer_order
    REFERENCING NEW TABLE AS new_orders
    FOR EACH STATEMENT EXECUTE FUNCTION kvreuse_notify_order();
