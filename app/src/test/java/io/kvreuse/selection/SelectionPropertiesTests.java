package io.kvreuse.selection;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** How much of a router's deadline a selection may spend before it answers. */
class SelectionPropertiesTests {

    @Test
    void theReplyReserveComesOffTheDeadline() {
        var p = new SelectionService.SelectionProperties(null, null, null);
        assertThat(p.replyReserve()).isEqualTo(Duration.ofMillis(10));
        assertThat(p.workNanos(Duration.ofMillis(100)))
                .isEqualTo(Duration.ofMillis(90).toNanos());
        assertThat(p.workNanos(Duration.ofSeconds(60)))
                .isEqualTo(Duration.ofMillis(59_990).toNanos());
    }

    @Test
    void aShortDeadlineKeepsAtLeastHalfForTheWork() {
        var p = new SelectionService.SelectionProperties(null, null, Duration.ofMillis(10));
        assertThat(p.workNanos(Duration.ofMillis(1)))
                .isEqualTo(Duration.ofNanos(500_000).toNanos());
        assertThat(p.workNanos(Duration.ofMillis(20)))
                .isEqualTo(Duration.ofMillis(10).toNanos());
        assertThat(p.workNanos(Duration.ofMillis(30)))
                .isEqualTo(Duration.ofMillis(20).toNanos());
    }

    @Test
    void noReserveUsesTheWholeDeadlineAndANegativeOneIsRefused() {
        var none = new SelectionService.SelectionProperties(null, null, Duration.ZERO);
        assertThat(none.workNanos(Duration.ofMillis(100)))
                .isEqualTo(Duration.ofMillis(100).toNanos());
        assertThatThrownBy(() -> new SelectionService.SelectionProperties(null, null, Duration.ofMillis(-1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("reply-reserve");
    }
}
