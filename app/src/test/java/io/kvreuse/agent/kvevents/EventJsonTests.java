package io.kvreuse.agent.kvevents;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.protocol.InventoryBatch;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

/** The bridge's hand-written event JSON says exactly what the events API's batch would in Jackson's words. */
class EventJsonTests {

    private final JsonMapper mapper = JsonMapper.builder().build();
    private final EventJson json = new EventJson();

    private static final long[] EDGES = {
        0,
        1,
        9,
        10,
        99,
        100,
        101,
        999_999_999_999_999_999L,
        Long.MAX_VALUE,
        Long.MIN_VALUE,
        -1,
        -2,
        -10,
        0x8000_0000_0000_0001L
    };

    @Test
    void unsignedHashesAtTheEdgesAreTheirDecimalStrings() {
        int[] slots = new int[EDGES.length];
        for (int i = 0; i < slots.length; i++) {
            slots[i] = i * 37;
        }
        byte[] event = json.stored(EDGES, -1L, 7, slots);
        List<InventoryBatch.Block> blocks = new ArrayList<>();
        for (int i = 0; i < EDGES.length; i++) {
            blocks.add(new InventoryBatch.Block(
                    Long.toUnsignedString(EDGES[i]),
                    Long.toUnsignedString(i == 0 ? -1L : EDGES[i - 1]),
                    7 + i,
                    slots[i]));
        }
        assertSame(event, new InventoryBatch.Event("STORED", blocks, null));
        assertThat(new String(json.removed(EDGES), StandardCharsets.US_ASCII))
                .contains("\"18446744073709551615\"", "\"9223372036854775808\"", "\"0\"", "\"9223372036854775807\"");
    }

    @Test
    void randomBatchesMatchTheProtocolRecordsJson() throws Exception {
        SplittableRandom random = new SplittableRandom(42);
        for (int round = 0; round < 200; round++) {
            List<byte[]> encoded = new ArrayList<>();
            List<InventoryBatch.Event> expected = new ArrayList<>();
            int events = 1 + random.nextInt(20);
            for (int e = 0; e < events; e++) {
                int n = 1 + random.nextInt(20);
                long[] hashes = random.longs(n).toArray();
                switch (random.nextInt(3)) {
                    case 0 -> {
                        Long parent = random.nextBoolean() ? null : random.nextLong();
                        Integer first = random.nextBoolean() ? null : random.nextInt(1_000_000);
                        int[] slots = random.ints(n, 0, 1 << 20).toArray();
                        encoded.add(json.stored(hashes, parent, first, slots));
                        List<InventoryBatch.Block> blocks = new ArrayList<>();
                        for (int i = 0; i < n; i++) {
                            Long p = i == 0 ? parent : Long.valueOf(hashes[i - 1]);
                            blocks.add(new InventoryBatch.Block(
                                    Long.toUnsignedString(hashes[i]),
                                    p == null ? null : Long.toUnsignedString(p),
                                    first == null ? null : first + i,
                                    slots[i]));
                        }
                        expected.add(new InventoryBatch.Event("STORED", blocks, null));
                    }
                    case 1 -> {
                        encoded.add(json.removed(hashes));
                        List<String> seqHashes = new ArrayList<>();
                        for (long h : hashes) {
                            seqHashes.add(Long.toUnsignedString(h));
                        }
                        expected.add(new InventoryBatch.Event("REMOVED", null, seqHashes));
                    }
                    default -> {
                        encoded.add(EventJson.NATIVE_CACHE_CLEARED);
                        expected.add(new InventoryBatch.Event("NATIVE_CACHE_CLEARED", null, null));
                    }
                }
            }
            int rank = random.nextInt(64);
            long first = random.nextLong(0, Long.MAX_VALUE);
            Long sequence = random.nextBoolean() ? null : random.nextLong(0, Long.MAX_VALUE);
            assertThat(mapper.readTree(EventJson.batch(rank, first, encoded, sequence)))
                    .isEqualTo(mapper.valueToTree(new InventoryBatch(rank, first, expected, sequence)));
        }
    }

    @Test
    void anEncoderIsReusedWithoutLeakingTheLastEvent() {
        byte[] big = json.stored(new long[] {1, 2, 3, 4, 5, 6, 7, 8}, null, 0, new int[] {0, 1, 2, 3, 4, 5, 6, 7});
        byte[] small = json.removed(new long[] {42});
        assertThat(new String(small, StandardCharsets.US_ASCII))
                .isEqualTo("{\"type\":\"REMOVED\",\"seqHashes\":[\"42\"]}");
        assertThat(big.length).isGreaterThan(small.length);
    }

    private void assertSame(byte[] event, InventoryBatch.Event expected) {
        assertThat(mapper.readTree(event)).isEqualTo(mapper.valueToTree(expected));
    }
}
