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
}
