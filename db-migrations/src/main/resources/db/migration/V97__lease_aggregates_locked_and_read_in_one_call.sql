-- A lease report group's transaction locked its leases in one statement and read them in a second
-- (LeaseAggregates): two round trips before the decision. kvreuse_lock_lease_aggregates does both
-- in one call. Its statements run one after the other inside a VOLATILE function, so the read takes
-- its snapshot after the locks were granted and sees what a transaction that held them committed, as
-- the second statement did. The lease's JSON shapes (LeaseRow, LeaseAggregate) move here unchanged,
-- so the command poll, the views and the locked read build them from one definition.

-- Lease l as the JSON object a LeaseRow decodes from; times as epoch seconds to the microsecond.
CREATE FUNCTION kvreuse_lease_row_json(l lease) RETURNS JSON LANGUAGE sql STABLE AS $$
    SELECT json_build_object('leaseId', l.lease_id, 'requestId', l.request_id, 'state', l.state, 'outcome', l.outcome,
        'reason', l.reason, 'domainId', l.domain_id, 'donorId', l.donor_incarnation_id, 'donorEpoch', l.donor_epoch,
        'bankId', l.bank_id, 'bankEpoch', l.bank_epoch, 'targetId', l.target_incarnation_id,
        'targetEpoch', l.target_epoch, 'localPrefixBlocks', l.local_prefix_blocks, 'fetchBlocks', l.fetch_blocks,
        'seqHashes', COALESCE(l.seq_hashes, '{}'), 'sourceRuns', COALESCE(l.source_slot_runs, '[]'),
        'transportClass', l.transport_class, 'predictedTransferMs', l.predicted_transfer_ms,
        'predictedRecomputeMs', l.predicted_recompute_ms, 'committedBlocks', l.committed_blocks,
        'sourceQuiesced', COALESCE(l.source_quiesced, FALSE),
        'destinationQuiesced', COALESCE(l.destination_quiesced, FALSE), 'version', l.version,
        'createdAt', EXTRACT(EPOCH FROM l.created_at), 'ttlDeadline', EXTRACT(EPOCH FROM l.ttl_deadline),
        'transferDeadline', EXTRACT(EPOCH FROM l.transfer_deadline),
        'abandonDeadline', EXTRACT(EPOCH FROM l.abandon_deadline),
        'stateChangedAt', EXTRACT(EPOCH FROM l.state_changed_at));
$$;

-- The leases p_ids names, in id order, each with its row, pins, destinations, commands, order parts
-- and parties as one JSON object in the shape of LeaseAggregate; an order without parts reads as none.
CREATE FUNCTION kvreuse_lease_aggregates(p_ids UUID[]) RETURNS TABLE (lease_id UUID, read JSON)
LANGUAGE sql STABLE AS $$
    SELECT l.lease_id, json_build_object('row', kvreuse_lease_row_json(l),
        'tp', (SELECT tp_size FROM layout_domain d WHERE d.domain_id = l.domain_id),
        'pins', COALESCE((SELECT json_agg(json_build_object('rank', rank, 'state', state) ORDER BY rank)
            FROM lease_source_pin WHERE lease_id = l.lease_id), '[]'),
        'destinations', COALESCE((SELECT json_agg(json_build_object('rank', rank, 'regionRef', region_ref,
                'runs', slot_runs, 'state', state) ORDER BY rank)
            FROM lease_destination WHERE lease_id = l.lease_id), '[]'),
        'commands', COALESCE((SELECT json_agg(json_build_object('commandId', command_id,
                'incarnationId', incarnation_id, 'type', type, 'rank', rank,
                'state', CASE WHEN acked_at IS NULL THEN 'OPEN' WHEN ok THEN 'ACKED' ELSE 'REFUSED' END))
            FROM engine_command WHERE lease_id = l.lease_id), '[]'),
        'order', (SELECT json_build_object('orderId', o.order_id, 'state', o.state,
                'parts', json_object_agg(rank, json_build_object('rank', rank, 'state', state, 'bytes', bytes,
                    'bytesMoved', bytes_moved, 'durationUs', COALESCE(duration_us, 0))))
            FROM transfer_part WHERE order_id = o.order_id HAVING count(*) > 0),
        'parties', json_build_object(
            'donorEpoch', COALESCE(di.fencing_epoch, -1), 'targetEpoch', COALESCE(ti.fencing_epoch, -1),
            'bankEpoch', b.bank_epoch, 'bankDropped', b.state = 'DROPPED',
            'partBytes', COALESCE((SELECT min(bytes) FROM transfer_part WHERE order_id = o.order_id), 0),
            'donorOwner', di.owner_subject, 'targetOwner', ti.owner_subject))
    FROM lease l JOIN retained_bank b ON b.bank_id = l.bank_id LEFT JOIN transfer_order o ON o.lease_id = l.lease_id
    LEFT JOIN engine_incarnation di ON di.incarnation_id = l.donor_incarnation_id
    LEFT JOIN engine_incarnation ti ON ti.incarnation_id = l.target_incarnation_id
    WHERE l.lease_id = ANY(p_ids)
    ORDER BY l.lease_id;
$$;

-- Locks the leases p_ids names and those of the commands p_cmds of incarnations p_incs (another
-- incarnation's command locks nothing), in id order, FOR UPDATE, and share-locks their banks, so a
-- reset or eviction waits for the group; then reads them as kvreuse_lease_aggregates does. The rest of
-- the transaction runs its prepared statements on generic plans and joins in the order they are
-- written (docs/lease-sql.md), as the separate lock statement arranged before.
CREATE FUNCTION kvreuse_lock_lease_aggregates(p_ids UUID[], p_cmds UUID[], p_incs UUID[])
RETURNS TABLE (lease_id UUID, read JSON) LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    locked UUID[];
BEGIN
    PERFORM set_config('plan_cache_mode', 'force_generic_plan', true), set_config('join_collapse_limit', '1', true);
    SELECT coalesce(array_agg(x.lease_id ORDER BY x.lease_id), '{}') INTO locked FROM (
        SELECT l.lease_id FROM lease l JOIN retained_bank b ON b.bank_id = l.bank_id
        WHERE l.lease_id = ANY(p_ids || ARRAY(
            SELECT c.lease_id FROM engine_command c
            JOIN unnest(p_cmds, p_incs) AS m(id, inc) ON c.command_id = m.id AND c.incarnation_id = m.inc))
        ORDER BY l.lease_id FOR UPDATE OF l FOR SHARE OF b) AS x;
    IF cardinality(locked) > 0 THEN
        -- a statement of its own: its snapshot is taken now, after the locks were granted
        RETURN QUERY SELECT a.lease_id, a.read FROM kvreuse_lease_aggregates(locked) AS a ORDER BY a.lease_id;
    END IF;
END;
$$;
