package io.kvreuse.agent.kvevents;

import org.msgpack.value.ArrayValue;
import org.msgpack.value.MapValue;
import org.msgpack.value.Value;
import org.msgpack.value.ValueFactory;

/**
 * vLLM's KVEvents: {@code EventBatch{ts, events, data_parallel_rank}} as a positional array (older
 * releases) or a map (newer ones); each event tagged by {@code type}, either a map keyed by field
 * name or a positional array {@code [tag, fields in declaration order...]} whose trailing defaults
 * may be left out. Unknown extra fields (SGLang's {@code cache_salt}, {@code session_id}) are ignored.
 */
final class VllmKvEventsCodec extends KvEventCodec {

    // declaration order of the positional encoding; index 0 is the tag
    private static final String[] STORED = {
        "type",
        "block_hashes",
        "parent_block_hash",
        "token_ids",
        "block_size",
        "lora_id",
        "medium",
        "lora_name",
        "extra_keys",
        "group_idx",
        "kv_cache_spec_kind"
    };
    private static final String[] REMOVED = {"type", "block_hashes", "medium", "group_idx"};
    private static final String[] CLEARED = {"type"};

    @Override
    long firstSequence() {
        return 0;
    }

    @Override
    KvEvent event(Value event) throws BadEvent {
        Fields f = Fields.of(event);
        String type = string(f.get("type", 0), "type");
        return switch (type) {
            case "BlockStored" -> {
                f.declare(STORED);
                long[] hashes = hashes(f.get("block_hashes"), "block_hashes");
                yield new KvEvent.Stored(
                        hashes,
                        optionalHash(f.get("parent_block_hash"), "parent_block_hash"),
                        null,
                        slots(f.named("slots"), f.get("extra_keys"), hashes.length),
                        medium(f.get("medium")));
            }
            case "BlockRemoved" -> {
                f.declare(REMOVED);
                yield new KvEvent.Removed(hashes(f.get("block_hashes"), "block_hashes"), medium(f.get("medium")));
            }
            case "AllBlocksCleared" -> {
                f.declare(CLEARED);
                yield new KvEvent.Cleared(medium(f.named("medium")));
            }
            default -> throw new BadEvent("unknown event type " + type);
        };
    }

    /** An event's fields by name, whichever of the two encodings it arrived in. */
    private static final class Fields {
        private final MapValue map;
        private final ArrayValue array;
        private String[] order = {};

        private Fields(MapValue map, ArrayValue array) {
            this.map = map;
            this.array = array;
        }

        static Fields of(Value event) throws BadEvent {
            if (event.isMapValue()) {
                return new Fields(event.asMapValue(), ValueFactory.emptyArray());
            }
            if (event.isArrayValue() && event.asArrayValue().size() > 0) {
                return new Fields(ValueFactory.emptyMap(), event.asArrayValue());
            }
            throw new BadEvent("an event is a map or a tagged array, not " + event.getValueType());
        }

        void declare(String[] order) {
            this.order = order;
        }

        Value get(String name, int index) {
            return array.size() > 0 ? (index < array.size() ? array.get(index) : ValueFactory.newNil()) : named(name);
        }

        Value get(String name) {
            for (int i = 0; i < order.length; i++) {
                if (order[i].equals(name)) {
                    return get(name, i);
                }
            }
            return named(name);
        }

        Value named(String name) {
            return array.size() > 0 ? ValueFactory.newNil() : KvEventCodec.get(map, name);
        }
    }
}
