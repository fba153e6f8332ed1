package io.kvreuse.agent.kvevents;

/**
 * Mooncake's KV event RFC #1527: payload {@code [timestamp_ms, [event maps], dp_rank]}, sequence
 * from 1; each event a map with {@code event_type} ({@code stored}, {@code removed}, {@code
 * cleared}), {@code seq_hashes}, {@code base_block_idx} (depth of the first block), {@code
 * parent_hash} and namespace fields, of which only {@code medium} matters here.
 */
final class Rfc1527Codec extends KvEventCodec {

    private static final int TYPE = 0;
    private static final int MEDIUM = 1;
    private static final int SEQ_HASHES = 2;
    private static final int BASE_BLOCK_IDX = 3;
    private static final int PARENT = 4;
    private static final int SLOTS = 5;
    private static final int EXTRA_KEYS = 6;
    private static final byte[][] NAMES = {
        ascii("event_type"),
        ascii("medium"),
        ascii("seq_hashes"),
        ascii("base_block_idx"),
        ascii("parent_hash"),
        ascii("slots"),
        ascii("extra_keys")
    };
    private static final byte[] STORED = ascii("stored");
    private static final byte[] REMOVED = ascii("removed");
    private static final byte[] CLEARED = ascii("cleared");

    @Override
    long firstSequence() {
        return 1;
    }

    @Override
    KvEvent event(Msgpack in, int start) throws BadEvent {
        if (!at(in, start).isMap()) {
            throw new BadEvent("an RFC #1527 event is a map, not " + in.type());
        }
        int[] f = fields(in, NAMES);
        if (!isNil(in, f[TYPE]) && !at(in, f[TYPE]).isString()) {
            throw new BadEvent("event_type is not a string");
        }
        String medium = medium(in, f[MEDIUM]);
        if (is(in, f[TYPE], STORED)) {
            long[] hashes = hashes(in, f[SEQ_HASHES], "seq_hashes");
            Integer depth = optionalInt(in, f[BASE_BLOCK_IDX], "base_block_idx");
            Long parent = optionalHash(in, f[PARENT], "parent_hash");
            if (depth != null && depth > 0 && parent == null) {
                throw new BadEvent("base_block_idx " + depth + " without a parent_hash");
            }
            return new KvEvent.Stored(hashes, parent, depth, slots(in, f[SLOTS], f[EXTRA_KEYS], hashes.length), medium);
        }
        if (is(in, f[TYPE], REMOVED)) {
            return new KvEvent.Removed(hashes(in, f[SEQ_HASHES], "seq_hashes"), medium);
        }
        if (is(in, f[TYPE], CLEARED)) {
            return new KvEvent.Cleared(medium);
        }
        throw new BadEvent("unknown event_type " + string(in, f[TYPE], "event_type"));
    }
}
