package io.kvreuse.hash;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvreuse.error.InvalidRequestException;
import java.util.List;
import org.junit.jupiter.api.Test;

class SeqHashTests {

    @Test
    void parseAcceptsAsciiDecimalAndHexOnly() {
        assertThat(SeqHash.parse("18446744073709551615", "h")).isEqualTo(-1L);
        assertThat(SeqHash.parse("0xff", "h")).isEqualTo(255L);
        assertThat(SeqHash.parse("0XFF", "h")).isEqualTo(255L);
        assertThat(SeqHash.parse("0", "h")).isZero();
    }

    @Test
    void parseRefusesNonAsciiDigitsSignsAndOverflow() {
        for (String bad : List.of(
                "\u0661\u0662\u0663", // Arabic-Indic 123
                "\uFF11\uFF12", // fullwidth 12
                "1\u0663",
                "0x\u0661",
                "0x+ff",
                "0x-1",
                "+1",
                "-1",
                "18446744073709551616",
                "1.5",
                " 1",
                "")) {
            assertThatThrownBy(() -> SeqHash.parse(bad, "seqHashes[0]"))
                    .as(bad)
                    .isInstanceOf(InvalidRequestException.class)
                    .hasMessageContaining("seqHashes[0]");
        }
    }

    @Test
    void theShortDecimalPathGivesWhatTheJdkGivesAtEveryLength() {
        java.util.SplittableRandom random = new java.util.SplittableRandom(7);
        for (int i = 0; i < 10_000; i++) {
            long bits = random.nextLong() >>> random.nextInt(64);
            String decimal = Long.toUnsignedString(bits);
            assertThat(SeqHash.parse(decimal, "h")).as(decimal).isEqualTo(bits);
        }
        for (String edge : List.of(
                "9999999999999999999",
                "10000000000000000000",
                "9223372036854775807",
                "9223372036854775808",
                "18446744073709551615",
                "0000000000000000001",
                "00000000000000000012")) {
            assertThat(SeqHash.parse(edge, "h")).as(edge).isEqualTo(Long.parseUnsignedLong(edge));
        }
    }

    @Test
    void aBadValueNamesTheFieldPutTogetherFromItsParts() {
        assertThatThrownBy(() -> SeqHash.parse("x", "events[3].blocks[", 7, "].parentHash"))
                .isInstanceOf(InvalidRequestException.class)
                .hasMessageStartingWith("events[3].blocks[7].parentHash must be");
        assertThatThrownBy(() -> SeqHash.parse(null, "blocks[", 0, "].seqHash"))
                .isInstanceOf(InvalidRequestException.class)
                .hasMessageStartingWith("blocks[0].seqHash must be");
    }
}
