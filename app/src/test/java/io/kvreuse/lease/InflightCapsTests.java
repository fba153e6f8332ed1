package io.kvreuse.lease;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class InflightCapsTests {

    static final UUID D1 = UUID.randomUUID();
    static final UUID D2 = UUID.randomUUID();
    static final UUID T1 = UUID.randomUUID();
    static final UUID T2 = UUID.randomUUID();

    @Test
    void aGroupCountsTheStoredLeasesAndItsOwnEarlierAdmissions() {
        var group = List.of(
                new InflightCaps.Parties(D1, T1),
                new InflightCaps.Parties(D1, T2),
                new InflightCaps.Parties(D1, T1),
                new InflightCaps.Parties(D2, T2));
        var stored = new InflightCaps.Counts(Map.of(D1, 1), Map.of());
        assertThat(InflightCaps.admit(group, stored, 2, 100)).containsExactly(true, false, false, true);
    }

    @Test
    void aProposalRefusedByItsTargetDoesNotTakeItsDonorsPlace() {
        var group = List.of(
                new InflightCaps.Parties(D1, T1), new InflightCaps.Parties(D1, T2), new InflightCaps.Parties(D2, T2));
        var stored = new InflightCaps.Counts(Map.of(), Map.of(T1, 1));
        assertThat(InflightCaps.admit(group, stored, 1, 1)).containsExactly(false, true, false);
    }

    @Test
    void nothingStoredAdmitsUpToTheCaps() {
        var group = List.of(new InflightCaps.Parties(D1, T1), new InflightCaps.Parties(D1, T1));
        var none = new InflightCaps.Counts(Map.of(), Map.of());
        assertThat(InflightCaps.admit(group, none, 1, 5)).containsExactly(true, false);
        assertThat(InflightCaps.admit(group, none, 5, 5)).containsExactly(true, true);
    }
}
