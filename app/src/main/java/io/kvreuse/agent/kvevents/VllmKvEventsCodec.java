package io.kvreuse.agent.kvevents;

/**
 * vLLM's KVEvents: {@code EventBatch{ts, events, data_parallel_rank}} as a positional array (older
 * releases) or a map (newer ones); each event tagged by {@code type}, either a map keyed by field
 * name or a positional array {@code [tag, fields in declaration order...]} whose trailing defaults
 * may be left out. Unknown extra fields (SGLang's {@code cache_salt}, {@code session_id}) are ignored.
 */
final class VllmKvEventsCodec extends KvEventCodec {

    // the fields read, by name (map events)
    private static final int TYPE = 0;
    private static final int BLOCK_HASHES = 1;
    private static final int PARENT = 2;
    private static final int MEDIUM = 3;
    private static final int EXTRA_KEYS = 4;
    private static final int SLOTS = 5;
    private static final byte[][] NAMES = {
        ascii("type"),
        ascii("block_hashes"),
        ascii("parent_block_hash"),
        ascii("medium"),
        ascii("extra_keys"),
        ascii("slots")
    };

    // declaration order of the positional encoding; index 0 is the tag:
    // BlockStored[type, block_hashes, parent_block_hash, token_ids, block_size, lora_id, medium,
    //             lora_name, extra_keys, group_idx, kv_cache_spec_kind]
    // BlockRemoved[type, block_hashes, medium, group_idx]; AllBlocksCleared[type]
    private static final int STORED_MEDIUM_INDEX = 6;
    private static final int STORED_EXTRA_KEYS_INDEX = 8;
    private static final int REMOVED_MEDIUM_INDEX = 2;
    private static final int POSITIONS_READ = 9;

    private static final byte[] BLOCK_STORED = ascii("BlockStored");
    private static final byte[] BLOCK_REMOVED = ascii("BlockRemoved");
    private static final byte[] ALL_BLOCKS_CLEARED = ascii("AllBlocksCleared");

    @Override
    long firstSequence() {
        return 0;
    }

    @Override
    KvEvent event(Msgpack in, int start) throws BadEvent {
        int[] f;
        boolean positional;
        if (at(in, start).isMap()) {
            f = fields(in, NAMES);
            positional = false;
        } else if (in.isArray()) {
            int n = in.arrayHeader();
            if (n == 0) {
                throw new BadEvent("an event is a map or a tagged array, not ARRAY");
            }
            int[] at = new int[POSITIONS_READ];
            java.util.Arrays.fill(at, ABSENT);
            for (int i = 0; i < Math.min(n, POSITIONS_READ); i++) {
                at[i] = in.pos;
                in.skip();
            }
            positional = true;
            f = at;
        } else {
            throw new BadEvent("an event is a map or a tagged array, not " + in.type());
        }
        int type = positional ? f[0] : f[TYPE];
        if (is(in, type, BLOCK_STORED)) {
            int hashesAt = positional ? f[1] : f[BLOCK_HASHES];
            long[] hashes = hashes(in, hashesAt, "block_hashes");
            return new KvEvent.Stored(
                    hashes,
                    optionalHash(in, positional ? f[2] : f[PARENT], "parent_block_hash"),
                    null,
                    slots(
                            in,
                            positional ? ABSENT : f[SLOTS],
                            positional ? f[STORED_EXTRA_KEYS_INDEX] : f[EXTRA_KEYS],
                            hashes.length),
                    medium(in, positional ? f[STORED_MEDIUM_INDEX] : f[MEDIUM]));
        }
        if (is(in, type, BLOCK_REMOVED)) {
            return new KvEvent.Removed(
                    hashes(in, positional ? f[1] : f[BLOCK_HASHES], "block_hashes"),
                    medium(in, positional ? f[REMOVED_MEDIUM_INDEX] : f[MEDIUM]));
        }
        if (is(in, type, ALL_BLOCKS_CLEARED)) {
            return new KvEvent.Cleared(medium(in, positional ? ABSENT : f[MEDIUM]));
        }
        throw new BadEvent("unknown event type " + string(in, type, "type"));
    }
}
