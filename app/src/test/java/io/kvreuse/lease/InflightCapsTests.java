package io.kvreuse.lease;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.UUID;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

class InflightCapsTests {

    @Test
    void everyWriterTakesTheLocksOfAGroupInKeyOrderAndEachOnce() {
        List<UUID> donors =
                IntStream.range(0, 5).mapToObj(i -> UUID.randomUUID()).toList();
        List<UUID> targets =
                IntStream.range(0, 3).mapToObj(i -> UUID.randomUUID()).toList();
        var group = IntStream.range(0, 40)
                .mapToObj(i -> new InflightCaps.Parties(donors.get(i % 5), targets.get(i % 3)))
                .toList();
        int[] keys = InflightCaps.lockKeys(group);
        assertThat(keys).isSorted().doesNotHaveDuplicates();
        assertThat(keys)
                .containsExactlyInAnyOrder(Stream.concat(donors.stream(), targets.stream())
                        .mapToInt(InflightCaps::key)
                        .distinct()
                        .toArray());
        assertThat(InflightCaps.lockKeys(group.reversed()))
                .as("the order does not depend on the group's order")
                .isEqualTo(keys);
    }
}
