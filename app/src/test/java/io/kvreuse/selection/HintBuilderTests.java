package io.kvreuse.selection;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.SplittableRandom;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;

class HintBuilderTests {

    @Test
    void aHashIsWrittenAsItsExactUnsignedDecimalDigits() {
        LongStream edges = LongStream.of(0, 1, 9, 10, Long.MAX_VALUE, Long.MIN_VALUE, -1, -10, -11, Long.MIN_VALUE + 9);
        LongStream random = new SplittableRandom(15).longs(10_000);
        LongStream.concat(edges, random)
                .forEach(v -> assertThat(
                                HintBuilder.unsigned(new StringBuilder("["), v).toString())
                        .isEqualTo("[" + Long.toUnsignedString(v)));
        assertThat(HintBuilder.unsigned(new StringBuilder(), -1).toString())
                .isEqualTo("18446744073709551615")
                .doesNotStartWith("-");
    }

    @Test
    void aCpuHintListsTheRootAlignedHashesExactly() {
        long[] chain = {1, -1, Long.MIN_VALUE, 42};
        String hint = HintBuilder.cpu("tcp://donor:5557", chain, 3);
        int from = hint.indexOf("\"block_hashes\":[") + "\"block_hashes\":[".length();
        assertThat(hint.substring(from, hint.indexOf(']', from)))
                .as("the first three hashes, unsigned, and not the fourth")
                .isEqualTo("1,18446744073709551615,9223372036854775808");
    }
}
