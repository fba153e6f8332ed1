package io.kvreuse.admin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvreuse.settings.ReuseSettings;
import org.junit.jupiter.api.Test;

class HumanUnitsTests {

    @Test
    void bytesShowTheLargestExactBinaryUnit() {
        assertThat(HumanUnits.bytes(8L << 30)).isEqualTo("8 GiB");
        assertThat(HumanUnits.bytes(1L << 40)).isEqualTo("1 TiB");
        assertThat(HumanUnits.bytes(3L << 19)).isEqualTo("1.5 MiB");
        assertThat(HumanUnits.bytes(1000)).isEqualTo("1000 B");
        assertThat(HumanUnits.bytes(1)).isEqualTo("1 B");
        assertThat(HumanUnits.bytes(1_000_000_007L)).isEqualTo("1000000007 B");
    }

    @Test
    void durationsShowTheLargestExactUnit() {
        assertThat(HumanUnits.millis(5_000)).isEqualTo("5 s");
        assertThat(HumanUnits.millis(60_000)).isEqualTo("1 min");
        assertThat(HumanUnits.millis(86_400_000)).isEqualTo("24 h");
        assertThat(HumanUnits.millis(250)).isEqualTo("250 ms");
        assertThat(HumanUnits.millis(7_500)).isEqualTo("7.5 s");
        assertThat(HumanUnits.millis(2.0)).isEqualTo("2 ms");
        assertThat(HumanUnits.millis(0.5)).isEqualTo("0.5 ms");
        assertThat(HumanUnits.millis(0)).isEqualTo("0 ms");
        assertThat(HumanUnits.percent(0.1)).isEqualTo("10 %");
        assertThat(HumanUnits.percent(0)).isEqualTo("0 %");
    }

    @Test
    void whatIsShownParsesBackToTheSameValue() {
        for (long n : new long[] {1, 1000, 8L << 30, 3L << 19, 1L << 40, 123_456_789}) {
            assertThat(HumanUnits.parseBytes(HumanUnits.bytes(n))).isEqualTo(n);
        }
        for (long ms : new long[] {100, 250, 1_500, 5_000, 60_000, 90_000, 3_600_000, 86_400_000}) {
            assertThat(HumanUnits.parseWholeMillis(HumanUnits.millis(ms))).isEqualTo(ms);
        }
        assertThat(HumanUnits.parseShare(HumanUnits.percent(0.125))).isEqualTo(0.125);
    }

    @Test
    void operatorsTypeUnitsOrBareNumbers() {
        assertThat(HumanUnits.parseBytes("512 MiB")).isEqualTo(512L << 20);
        assertThat(HumanUnits.parseBytes("8gib")).isEqualTo(8L << 30);
        assertThat(HumanUnits.parseBytes("2 GB")).isEqualTo(2_000_000_000L);
        assertThat(HumanUnits.parseBytes("8589934592")).isEqualTo(8L << 30);
        assertThat(HumanUnits.parseWholeMillis("2 min")).isEqualTo(120_000);
        assertThat(HumanUnits.parseWholeMillis(" 5s ")).isEqualTo(5_000);
        assertThat(HumanUnits.parseWholeMillis("1 h")).isEqualTo(3_600_000);
        assertThat(HumanUnits.parseWholeMillis("5000")).isEqualTo(5_000);
        assertThat(HumanUnits.parseMillis("0.5 ms")).isEqualTo(0.5);
        assertThat(HumanUnits.parseShare("10 %")).isEqualTo(0.1);
        assertThat(HumanUnits.parseShare("0.25")).isEqualTo(0.25);
    }

    @Test
    void unreadableInputIsRefusedWithWhatWasExpected() {
        assertThatThrownBy(() -> HumanUnits.parseBytes("lots"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("8 GiB");
        assertThatThrownBy(() -> HumanUnits.parseBytes("8 GiBs")).hasMessageContaining("unknown unit 'GiBs'");
        assertThatThrownBy(() -> HumanUnits.parseBytes("1.5 B")).hasMessageContaining("whole number of bytes");
        assertThatThrownBy(() -> HumanUnits.parseBytes("-1 GiB")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> HumanUnits.parseBytes("99999999999 TiB")).hasMessageContaining("too large");
        assertThatThrownBy(() -> HumanUnits.parseWholeMillis("5 days")).hasMessageContaining("unknown unit");
        assertThatThrownBy(() -> HumanUnits.parseWholeMillis("0.5 ms")).hasMessageContaining("whole number");
        assertThatThrownBy(() -> HumanUnits.parseShare("10 ms")).hasMessageContaining("10 %");
        assertThatThrownBy(() -> HumanUnits.parseShare("")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void rangeMessagesSpeakTheFieldsUnit() {
        assertThat(SettingsForm.inUnits("leaseTtlMs", "must be between 100 and 600000"))
                .isEqualTo("must be between 100 ms and 10 min");
        assertThat(SettingsForm.inUnits("maxFetchBytes", "must be between 1 and 1099511627776"))
                .isEqualTo("must be between 1 B and 1 TiB");
        assertThat(SettingsForm.inUnits("minGainRatio", "must be between 0 and 1"))
                .isEqualTo("must be between 0 and 1 (0 % to 100 %)");
        assertThat(SettingsForm.inUnits("maxDonorCandidates", "must be between 1 and 256"))
                .isEqualTo("must be between 1 and 256");
    }

    @Test
    void onlyFleetWideSwitchesNeedAConfirmationThatNamesThem() {
        ReuseSettings off = ReuseSettings.defaults();
        ReuseSettings on =
                new ReuseSettings(true, false, 4, 4096, 8L << 30, 8, 2.0, 0.1, 5_000, 10_000, 60_000, 16, 16);
        ReuseSettings longerTtl =
                new ReuseSettings(false, false, 4, 4096, 8L << 30, 8, 2.0, 0.1, 8_000, 10_000, 60_000, 16, 16);

        SettingsChanges turnOn = SettingsChanges.between(off, on);
        assertThat(turnOn.needsConfirmation()).isTrue();
        assertThat(turnOn.question()).isEqualTo("Turn reuse ON for the whole fleet?");
        assertThat(turnOn.confirmLabel()).isEqualTo("Yes, turn reuse ON");
        assertThat(SettingsChanges.between(on, off).question()).isEqualTo("Turn reuse OFF for the whole fleet?");
        assertThat(turnOn.fingerprint(7))
                .isNotEqualTo(SettingsChanges.between(on, off).fingerprint(7))
                .isNotEqualTo(turnOn.fingerprint(8));

        SettingsChanges ttl = SettingsChanges.between(off, longerTtl);
        assertThat(ttl.needsConfirmation()).isFalse();
        assertThat(ttl.changes()).singleElement().satisfies(c -> {
            assertThat(c.label()).isEqualTo("Lease TTL");
            assertThat(c.before()).isEqualTo("5 s");
            assertThat(c.after()).isEqualTo("8 s");
        });
        assertThat(SettingsChanges.between(off, off).changes()).isEmpty();
    }
}
