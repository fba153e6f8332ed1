package io.kvreuse.agent.kvevents;

import static io.kvreuse.agent.kvevents.KvEventPayloads.*;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class KvEventCodecTests {

    private final KvEventCodec vllm = new VllmKvEventsCodec();
    private final KvEventCodec rfc = new Rfc1527Codec();

    private static final long TOP = 0xFFFF_FFFF_FFFF_FFFFL; // 2^64-1
    private static final long HIGH = 0x8000_0000_0000_0001L; // above 2^63

    @Test
    void vllmPositionalArraysDecodeStoredRemovedAndCleared() throws Exception {
        byte[] payload = vllmArrayBatch(
                List.of(storedArray(u64(TOP, HIGH), null, 4), removedArray(u64(HIGH)), clearedArray()), 1);
        EngineBatch batch = vllm.decode(7, payload);
        assertThat(batch.sequence()).isEqualTo(7);
        assertThat(batch.dpRank()).isEqualTo(1);
        assertThat(batch.malformed()).isEmpty();
        assertThat(batch.events()).hasSize(3);
        KvEvent.Stored stored = (KvEvent.Stored) batch.events().get(0);
        assertThat(stored.hashes()).containsExactly(TOP, HIGH);
        assertThat(stored.parent()).isNull();
        assertThat(stored.slots()).containsExactly(4, 5);
        assertThat(stored.onGpu()).isTrue();
        assertThat(((KvEvent.Removed) batch.events().get(1)).hashes()).containsExactly(HIGH);
        assertThat(batch.events().get(2)).isInstanceOf(KvEvent.Cleared.class);
    }

    @Test
    void vllmMapsDecodeTheSameEvents() throws Exception {
        byte[] payload = vllmMapBatch(
                List.of(
                        storedMap(u64(3, 4), new java.math.BigInteger(Long.toUnsignedString(TOP)), 9, "GPU"),
                        removedMap(u64(3), "GPU"),
                        Map.of("type", "AllBlocksCleared")),
                null);
        EngineBatch batch = vllm.decode(0, payload);
        assertThat(batch.dpRank()).isNull();
        assertThat(batch.malformed()).isEmpty();
        KvEvent.Stored stored = (KvEvent.Stored) batch.events().get(0);
        assertThat(stored.hashes()).containsExactly(3L, 4L);
        assertThat(stored.parent()).isEqualTo(TOP);
        assertThat(stored.slots()).containsExactly(9, 10);
        assertThat(batch.events().get(1)).isInstanceOf(KvEvent.Removed.class);
        assertThat(batch.events().get(2)).isInstanceOf(KvEvent.Cleared.class);
    }

    @Test
    void olderPositionalEventsWithoutTrailingDefaultsDecode() throws Exception {
        // omit_defaults drops trailing fields: no extra keys, so no slots
        byte[] payload = vllmArrayBatch(List.of(Arrays.asList("BlockStored", u64(1), 0L, List.of(1, 2), 16)), 0);
        KvEvent.Stored stored =
                (KvEvent.Stored) vllm.decode(1, payload).events().getFirst();
        assertThat(stored.parent()).isZero();
        assertThat(stored.slots()).isNull();
        assertThat(stored.medium()).isEmpty();
        assertThat(stored.onGpu()).isTrue();
    }

    @Test
    void sglangNegativeInt64HashesAreTheSameBitsAndExtraFieldsAreIgnored() throws Exception {
        byte[] payload = vllmMapBatch(List.of(sglangStored(int64(-1L, Long.MIN_VALUE), -42L, 0)), 0);
        EngineBatch batch = vllm.decode(3, payload);
        assertThat(batch.malformed()).isEmpty();
        KvEvent.Stored stored = (KvEvent.Stored) batch.events().getFirst();
        assertThat(stored.hashes()).containsExactly(TOP, Long.MIN_VALUE);
        assertThat(Long.toUnsignedString(stored.hashes()[0])).isEqualTo("18446744073709551615");
        assertThat(stored.parent()).isEqualTo(-42L);
    }

    @Test
    void nonGpuMediaAreDecodedAndMarkedOffGpu() throws Exception {
        byte[] payload = vllmMapBatch(List.of(storedMap(u64(1), null, 0, "CPU"), removedMap(u64(1), "cpu")), 0);
        EngineBatch batch = vllm.decode(0, payload);
        assertThat(batch.events()).extracting(KvEvent::onGpu).containsExactly(false, false);
    }

    @Test
    void aMalformedEventIsIsolatedWithoutDroppingItsSiblings() throws Exception {
        List<Object> events = new ArrayList<>();
        events.add(storedArray(u64(1), null, 0));
        events.add(Arrays.asList("BlockStored", List.of("not-a-hash"))); // string hash
        events.add(Map.of("type", "BlockExploded"));
        events.add(Arrays.asList("BlockRemoved", List.of())); // no hashes
        events.add(42);
        events.add(Arrays.asList("BlockStored", List.of(new byte[] {1, 2}))); // bytes hash
        events.add(removedArray(u64(1)));
        EngineBatch batch = vllm.decode(5, vllmArrayBatch(events, 0));
        assertThat(batch.events()).hasSize(2);
        assertThat(batch.events().get(0)).isInstanceOf(KvEvent.Stored.class);
        assertThat(batch.events().get(1)).isInstanceOf(KvEvent.Removed.class);
        assertThat(batch.malformed())
                .hasSize(5)
                .anySatisfy(p -> assertThat(p).startsWith("events[1]").contains("block_hashes[0]"))
                .anySatisfy(p -> assertThat(p).startsWith("events[2]").contains("BlockExploded"))
                .anySatisfy(p -> assertThat(p).startsWith("events[5]"));
    }

    @Test
    void aPayloadThatIsNoBatchIsRefusedWhole() {
        assertThatThrownBy(() -> vllm.decode(0, new byte[] {(byte) 0xc1}))
                .isInstanceOf(MalformedPayloadException.class);
        assertThatThrownBy(() -> vllm.decode(0, pack("hello"))).isInstanceOf(MalformedPayloadException.class);
        assertThatThrownBy(() -> vllm.decode(0, pack(Arrays.asList(1.0, "events", 0))))
                .isInstanceOf(MalformedPayloadException.class);
        assertThatThrownBy(() -> vllm.decode(0, new byte[0])).isInstanceOf(MalformedPayloadException.class);
    }

    @Test
    void rfc1527EventsDecodeWithDepthAndNamespaceFields() throws Exception {
        byte[] payload = rfc1527Batch(
                List.of(
                        rfcEvent(1, "stored", u64(TOP, 8), 99L, 3, 12),
                        rfcEvent(2, "removed", u64(8), null, null, 0),
                        rfcEvent(3, "cleared", null, null, null, 0)),
                2);
        EngineBatch batch = rfc.decode(1, payload);
        assertThat(batch.dpRank()).isEqualTo(2);
        assertThat(batch.malformed()).isEmpty();
        KvEvent.Stored stored = (KvEvent.Stored) batch.events().get(0);
        assertThat(stored.hashes()).containsExactly(TOP, 8L);
        assertThat(stored.parent()).isEqualTo(99L);
        assertThat(stored.depth()).isEqualTo(3);
        assertThat(stored.slots()).containsExactly(12, 13);
        assertThat(batch.events().get(1)).isInstanceOf(KvEvent.Removed.class);
        assertThat(batch.events().get(2)).isInstanceOf(KvEvent.Cleared.class);
        assertThat(rfc.firstSequence()).isEqualTo(1);
        assertThat(vllm.firstSequence()).isZero();
    }

    @Test
    void rfc1527MalformedEventsAreIsolated() throws Exception {
        Map<String, Object> deepWithoutParent = rfcEvent(2, "stored", u64(5), null, 4, 0);
        byte[] payload = rfc1527Batch(
                List.of(rfcEvent(1, "stored", u64(5), null, 0, 0), deepWithoutParent, Map.of("event_type", "moved")),
                0);
        EngineBatch batch = rfc.decode(1, payload);
        assertThat(batch.events()).hasSize(1);
        assertThat(batch.malformed()).hasSize(2);
    }

    @Test
    void aThousandEventBatchDecodesWhole() throws Exception {
        List<Object> events = new ArrayList<>();
        for (int i = 0; i < 1000; i++) {
            events.add(i % 2 == 0 ? storedArray(u64(i + 1), i == 0 ? null : (long) i, i) : removedArray(u64(i)));
        }
        EngineBatch batch = vllm.decode(9, vllmArrayBatch(events, 0));
        assertThat(batch.events()).hasSize(1000);
        assertThat(batch.malformed()).isEmpty();
    }
}
