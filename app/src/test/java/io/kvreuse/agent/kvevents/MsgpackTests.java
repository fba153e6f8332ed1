package io.kvreuse.agent.kvevents;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;

/** The in-place reader against payloads written by msgpack-java's packer, every format family included. */
class MsgpackTests {

    @Test
    void integersOfEveryWidthReadAsTheir64Bits() throws Exception {
        long[] values = {
            0,
            1,
            127,
            128,
            255,
            256,
            65_535,
            65_536,
            4_294_967_295L,
            4_294_967_296L,
            Long.MAX_VALUE,
            -1,
            -32,
            -33,
            -128,
            -129,
            -32_768,
            -32_769,
            Integer.MIN_VALUE,
            Integer.MIN_VALUE - 1L,
            Long.MIN_VALUE
        };
        MessageBufferPacker p = MessagePack.newDefaultBufferPacker();
        for (long v : values) {
            p.packLong(v);
        }
        p.packBigInteger(new BigInteger("18446744073709551615"));
        p.packBigInteger(new BigInteger("9223372036854775808"));
        Msgpack in = new Msgpack(p.toByteArray());
        for (long v : values) {
            assertThat(in.isInteger()).isTrue();
            assertThat(in.isHugeUnsigned()).isFalse();
            assertThat(in.integerBits()).isEqualTo(v);
        }
        assertThat(in.isHugeUnsigned()).isTrue();
        assertThat(in.integerBits()).isEqualTo(-1L);
        assertThat(in.isHugeUnsigned()).isTrue();
        assertThat(in.integerBits()).isEqualTo(Long.MIN_VALUE);
    }

    @Test
    void skipMovesPastEveryKindOfValueExactly() throws Exception {
        SplittableRandom random = new SplittableRandom(3);
        for (int round = 0; round < 500; round++) {
            MessageBufferPacker p = MessagePack.newDefaultBufferPacker();
            write(p, random, 0);
            int valueEnd = p.toByteArray().length;
            p.packString("after");
            byte[] bytes = p.toByteArray();
            Msgpack in = new Msgpack(bytes);
            in.skip();
            assertThat(in.pos).isEqualTo(valueEnd);
            assertThat(in.string()).isEqualTo("after");
            // every truncation of the value is refused, never read past
            int cut = random.nextInt(valueEnd);
            Msgpack truncated = new Msgpack(Arrays.copyOf(bytes, cut));
            assertThatThrownBy(truncated::skip).isInstanceOf(Msgpack.Bad.class);
        }
    }

    @Test
    void stringsCompareInPlaceAndTheUnassignedByteIsRefused() throws Exception {
        MessageBufferPacker p = MessagePack.newDefaultBufferPacker();
        p.packString("BlockStored").packString("x".repeat(40)).packString("ü");
        Msgpack in = new Msgpack(p.toByteArray());
        assertThat(in.stringEquals("BlockStored".getBytes(StandardCharsets.US_ASCII)))
                .isTrue();
        assertThat(in.stringEquals("BlockStore".getBytes(StandardCharsets.US_ASCII)))
                .isFalse();
        assertThat(in.string()).isEqualTo("BlockStored");
        assertThat(in.type()).isEqualTo("STRING");
        assertThat(in.string()).hasSize(40);
        assertThat(in.string()).isEqualTo("ü");
        assertThatThrownBy(() -> new Msgpack(new byte[] {(byte) 0xc1}).skip()).isInstanceOf(Msgpack.Bad.class);
        // an array announcing more elements than the payload could hold
        assertThatThrownBy(() -> new Msgpack(new byte[] {(byte) 0xdd, 0x7f, 0, 0, 0}).skip())
                .isInstanceOf(Msgpack.Bad.class);
    }

    private static void write(MessageBufferPacker p, SplittableRandom random, int depth) throws Exception {
        int kind = random.nextInt(depth > 3 ? 9 : 11);
        switch (kind) {
            case 0 -> p.packNil();
            case 1 -> p.packBoolean(random.nextBoolean());
            case 2 -> p.packLong(random.nextLong() >> random.nextInt(64));
            case 3 -> p.packDouble(random.nextDouble());
            case 4 -> p.packFloat((float) random.nextDouble());
            case 5 -> p.packString("s".repeat(random.nextInt(3) == 0 ? random.nextInt(70_000) : random.nextInt(40)));
            case 6 -> {
                byte[] bin = new byte[random.nextInt(300)];
                p.packBinaryHeader(bin.length).writePayload(bin);
            }
            case 7 -> {
                int[] sizes = {1, 2, 4, 8, 16, 3, 300, 70_000};
                byte[] data = new byte[sizes[random.nextInt(sizes.length)]];
                p.packExtensionTypeHeader((byte) 5, data.length).writePayload(data);
            }
            case 8 -> p.packBigInteger(new BigInteger(64, new java.util.Random(random.nextLong())));
            case 9 -> {
                int n = random.nextInt(4) == 0 ? 16 + random.nextInt(40) : random.nextInt(16);
                p.packArrayHeader(n);
                for (int i = 0; i < n; i++) {
                    write(p, random, depth + 1);
                }
            }
            default -> {
                int n = random.nextInt(4) == 0 ? 16 + random.nextInt(20) : random.nextInt(16);
                p.packMapHeader(n);
                for (int i = 0; i < n; i++) {
                    p.packString("k" + i);
                    write(p, random, depth + 1);
                }
            }
        }
    }
}
