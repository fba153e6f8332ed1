package io.kvreuse.incarnation;

import jakarta.validation.constraints.AssertTrue;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotNull;
import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.validation.annotation.Validated;

/**
 * Engine liveness ({@code kvreuse.liveness.*}).
 *
 * @param suspectAfter silence after which a READY, DRAINING or REGISTERED incarnation becomes
 *     SUSPECT; a heartbeat brings it back
 * @param lostAfter silence (since the last heartbeat) after which a SUSPECT incarnation becomes
 *     LOST for good; longer than {@code suspectAfter}
 * @param sweepInterval pause between two sweeps of the replica that holds the sweeper lock
 * @param sweepBatchSize most incarnations moved per state per sweep; the rest wait for the next
 * @param sweepEnabled whether this replica runs the scheduled sweeper at all
 */
@ConfigurationProperties("kvreuse.liveness")
@Validated
record LivenessProperties(
        @NotNull @DefaultValue("10s") Duration suspectAfter,
        @NotNull @DefaultValue("60s") Duration lostAfter,
        @NotNull @DefaultValue("1s") Duration sweepInterval,
        @Min(1) @Max(100_000) @DefaultValue("1000") int sweepBatchSize,
        @DefaultValue("true") boolean sweepEnabled) {

    @AssertTrue(message = "lostAfter must be longer than suspectAfter, and both positive")
    boolean isOrdered() {
        return suspectAfter.isPositive() && lostAfter.compareTo(suspectAfter) > 0 && sweepInterval.isPositive();
    }
}
