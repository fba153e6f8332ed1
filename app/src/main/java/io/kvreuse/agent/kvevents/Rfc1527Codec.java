package io.kvreuse.agent.kvevents;

import org.msgpack.value.MapValue;
import org.msgpack.value.Value;

/**
 * Mooncake's KV event RFC #1527: payload {@code [timestamp_ms, [event maps], dp_rank]}, sequence
 * from 1; each event a map with {@code event_type} ({@code stored}, {@code removed}, {@code
 * cleared}), {@code seq_hashes}, {@code base_block_idx} (depth of the first block), {@code
 * parent_hash} and namespace fields, of which only {@code medium} matters here.
 */
final class Rfc1527Codec extends KvEventCodec {

    @Override
    long firstSequence() {
        return 1;
    }

    @Override
    KvEvent event(Value event) throws BadEvent {
        if (!event.isMapValue()) {
            throw new BadEvent("an RFC #1527 event is a map, not " + event.getValueType());
        }
        MapValue m = event.asMapValue();
        String type = string(get(m, "event_type"), "event_type");
        String medium = medium(get(m, "medium"));
        return switch (type) {
            case "stored" -> {
                long[] hashes = hashes(get(m, "seq_hashes"), "seq_hashes");
                Integer depth = optionalInt(get(m, "base_block_idx"), "base_block_idx");
                Long parent = optionalHash(get(m, "parent_hash"), "parent_hash");
                if (depth != null && depth > 0 && parent == null) {
                    throw new BadEvent("base_block_idx " + depth + " without a parent_hash");
                }
                yield new KvEvent.Stored(
                        hashes, parent, depth, slots(get(m, "slots"), get(m, "extra_keys"), hashes.length), medium);
            }
            case "removed" -> new KvEvent.Removed(hashes(get(m, "seq_hashes"), "seq_hashes"), medium);
            case "cleared" -> new KvEvent.Cleared(medium);
            default -> throw new BadEvent("unknown event_type " + type);
        };
    }
}
