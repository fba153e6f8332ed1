package io.kvreuse.incarnation;

import static io.kvreuse.incarnation.IncarnationState.DRAINING;
import static io.kvreuse.incarnation.IncarnationState.EXITED;
import static io.kvreuse.incarnation.IncarnationState.LOST;
import static io.kvreuse.incarnation.IncarnationState.READY;
import static io.kvreuse.incarnation.IncarnationState.RECLAIMED;
import static io.kvreuse.incarnation.IncarnationState.RECLAIM_PENDING;
import static io.kvreuse.incarnation.IncarnationState.REGISTERED;
import static io.kvreuse.incarnation.IncarnationState.SUSPECT;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.EnumSet;
import org.junit.jupiter.api.Test;

class IncarnationStateTests {

    @Test
    void cleanPathAndUncleanPathFollowTheDesign() {
        assertThat(REGISTERED.canMoveTo(READY)).isTrue();
        assertThat(READY.canMoveTo(DRAINING)).isTrue();
        assertThat(DRAINING.canMoveTo(EXITED)).isTrue();
        assertThat(READY.canMoveTo(SUSPECT)).isTrue();
        assertThat(SUSPECT.canMoveTo(READY)).isTrue();
        assertThat(SUSPECT.canMoveTo(LOST)).isTrue();
        assertThat(LOST.canMoveTo(RECLAIM_PENDING)).isTrue();
        assertThat(RECLAIM_PENDING.canMoveTo(RECLAIMED)).isTrue();
    }

    @Test
    void lostNeverComesBackAndEndsAreFinal() {
        assertThat(LOST.next()).doesNotContain(READY, SUSPECT, EXITED, REGISTERED, DRAINING);
        assertThat(EXITED.next()).isEmpty();
        assertThat(RECLAIMED.next()).isEmpty();
        assertThat(REGISTERED.canMoveTo(DRAINING)).isFalse();
        for (IncarnationState s : IncarnationState.values()) {
            assertThat(s.canMoveTo(REGISTERED)).as("%s -> REGISTERED", s).isFalse();
            assertThat(s.canMoveTo(s)).as("%s -> itself", s).isFalse();
        }
    }

    @Test
    void onlyCleanExitAndReclaimReleaseNameAndGpus() {
        EnumSet<IncarnationState> released = EnumSet.noneOf(IncarnationState.class);
        for (IncarnationState s : IncarnationState.values()) {
            if (!s.holdsResources()) {
                released.add(s);
            }
        }
        assertThat(released).containsExactlyInAnyOrder(EXITED, RECLAIMED);
    }
}
